"""The baseline: bidirectional LSTM encoder, LSTM decoder with dot-product attention."""

from __future__ import annotations

import keras
import tensorflow as tf

from compgen_tf.arguments import positive_int, rate
from compgen_tf.models.seq2seq_model import Seq2SeqModel
from compgen_tf.vocabulary import EOS_ID, PAD_ID, SOS_ID

_NEG_INF = -1e9


@keras.saving.register_keras_serializable(package="compgen_tf")
class AttentionSeq2Seq(Seq2SeqModel):
    """LSTM sequence-to-sequence model with Luong dot-product attention.

    Encoder: embedding → bidirectional LSTM (`hidden_units` per direction);
    decoder: LSTM of width 2·`hidden_units` started from the concatenated final
    encoder states. At step t the decoder reads the previous output token,
    attends over the encoder outputs with scores h_t·e_j (masked at padding),
    and predicts from tanh(W_c[h_t; context_t]). During training each sequence
    is teacher-forced with probability `teacher_forcing_ratio`, otherwise it is
    fed its own argmax predictions.

    Args:
        source_words, target_words, max_input_length, max_output_length: see
            `Seq2SeqModel`.
        embedding_dim: size of the token embeddings.
        hidden_units: LSTM units of each encoder direction.
        dropout: dropout rate on embeddings and on the attentional vector.
        **kwargs: passed to `Seq2SeqModel`.

    Call arguments (`call((source_ids, target_ids), training)`): teacher-forced
        logits (batch, target_length, target_vocabulary_size).

    Example:
        >>> model = AttentionSeq2Seq(["jump", "twice"], ["I_JUMP"], hidden_units=8)
        >>> model.translate(["jump twice"])  # untrained: some action string
        ['...']

    References:
        Luong, Pham & Manning (2015), Effective approaches to attention-based NMT;
        Lake & Baroni (2018), Generalization without systematicity (SCAN baselines).
    """

    def __init__(self, source_words, target_words, embedding_dim=64, hidden_units=64, dropout=0.1,
                 **kwargs):
        super().__init__(source_words, target_words, **kwargs)
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.hidden_units = positive_int("hidden_units", hidden_units)
        self.dropout_rate = rate("dropout", dropout)
        self.source_embedding = keras.layers.Embedding(
            self.source_vocabulary_size, self.embedding_dim, name="source_embedding")
        self.encoder = keras.layers.Bidirectional(
            keras.layers.LSTM(self.hidden_units, return_sequences=True, return_state=True),
            name="encoder")
        self.target_embedding = keras.layers.Embedding(
            self.target_vocabulary_size, self.embedding_dim, name="target_embedding")
        self.decoder_cell = keras.layers.LSTMCell(2 * self.hidden_units, name="decoder_cell")
        self.attention_combine = keras.layers.Dense(2 * self.hidden_units, activation="tanh",
                                                    name="attention_combine")
        self.output_projection = keras.layers.Dense(self.target_vocabulary_size,
                                                    name="output_projection")
        self.dropout = keras.layers.Dropout(self.dropout_rate)

    def encode(self, source_ids, training=False):
        """Returns encoder outputs (B, S, 2H), their mask (B, S) and the decoder's first state."""
        mask = tf.not_equal(source_ids, PAD_ID)
        embedded = self.dropout(self.source_embedding(source_ids), training=training)
        outputs, fw_h, fw_c, bw_h, bw_c = self.encoder(embedded, mask=mask, training=training)
        state = [tf.concat([fw_h, bw_h], -1), tf.concat([fw_c, bw_c], -1)]
        return outputs, mask, state

    def decoder_constants(self):
        """Tensors that every decoding step uses and none changes, computed once per sequence
        (before the decoding loop) and passed to `decoder_step`; none here."""
        return ()

    def decoder_step(self, previous_ids, state, encoder_outputs, mask, training=False,
                     constants=()):
        """One decoding step → (logits (B, V), new state, attention weights (B, S))."""
        embedded = self.dropout(self.target_embedding(previous_ids), training=training)
        hidden, state = self.decoder_cell(embedded, state, training=training)
        scores = tf.einsum("bd,bsd->bs", hidden, encoder_outputs)
        weights = tf.nn.softmax(tf.where(mask, scores, _NEG_INF), axis=-1)
        context = tf.einsum("bs,bsd->bd", weights, encoder_outputs)
        attentional = self.attention_combine(tf.concat([hidden, context], -1))
        logits = self.mask_special_logits(
            self.output_projection(self.dropout(attentional, training=training)))
        return logits, state, weights

    def compute_logits(self, source_ids, target_ids, training=False, teacher_forcing_ratio=1.0,
                       seed=None):
        encoder_outputs, mask, state = self.encode(source_ids, training=training)
        constants = self.decoder_constants()
        batch = tf.shape(target_ids)[0]
        steps = tf.shape(target_ids)[1]
        if seed is None:
            teacher_forced = tf.fill([batch], True)
        else:
            teacher_forced = tf.random.stateless_uniform([batch], seed) < teacher_forcing_ratio
        target_by_time = tf.transpose(target_ids)

        def body(t, previous, state, logits_array):
            logits, state, _ = self.decoder_step(previous, state, encoder_outputs, mask, training,
                                                 constants)
            predicted = tf.argmax(logits, axis=-1, output_type=tf.int32)
            following = tf.where(teacher_forced, target_by_time[t], predicted)
            return t + 1, following, state, logits_array.write(t, logits)

        _, _, _, logits_array = tf.while_loop(
            lambda t, *_: t < steps, body,
            (0, tf.fill([batch], SOS_ID), state,
             tf.TensorArray(self.compute_dtype, size=steps)),
            maximum_iterations=steps)  # XLA needs a bound for the TensorArray
        return tf.transpose(logits_array.stack(), [1, 0, 2])

    def greedy_decode_with_attention(self, source_ids, max_length=None):
        max_length = max_length or self.max_output_length
        encoder_outputs, mask, state = self.encode(source_ids)
        constants = self.decoder_constants()
        batch = tf.shape(source_ids)[0]
        positions = tf.range(max_length)

        def body(t, previous, state, finished, output_ids, attention):
            logits, state, weights = self.decoder_step(previous, state, encoder_outputs, mask,
                                                       constants=constants)
            token = tf.argmax(logits, axis=-1, output_type=tf.int32)
            token = tf.where(finished, PAD_ID, token)
            at_t = tf.equal(positions, t)[None, :]
            output_ids = tf.where(at_t, token[:, None], output_ids)
            attention = tf.where(at_t[:, :, None], weights[:, None, :], attention)
            return t + 1, token, state, finished | tf.equal(token, EOS_ID), output_ids, attention

        def not_done(t, previous, state, finished, *_):
            return (t < max_length) & tf.logical_not(tf.reduce_all(finished))

        initial = (0, tf.fill([batch], SOS_ID), state, tf.fill([batch], False),
                   tf.fill([batch, max_length], PAD_ID),
                   tf.zeros([batch, max_length, tf.shape(source_ids)[1]], self.compute_dtype))
        _, _, _, _, output_ids, attention = tf.while_loop(not_done, body, initial)
        return output_ids, attention

    def get_config(self):
        config = super().get_config()
        config.update({"embedding_dim": self.embedding_dim, "hidden_units": self.hidden_units,
                       "dropout": self.dropout_rate})
        return config
