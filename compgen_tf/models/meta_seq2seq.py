"""`MetaSeq2Seq`: the meta sequence-to-sequence learner of Lake (2019)."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from compgen_tf.arguments import positive_int, rate
from compgen_tf.layers.key_value_memory import KeyValueMemory
from compgen_tf.models.seq2seq_model import Seq2SeqModel, _as_str_list
from compgen_tf.vocabulary import EOS, EOS_ID, PAD, PAD_ID, SOS, SOS_ID, UNK

_NEG_INF = -1e9


@keras.saving.register_keras_serializable(package="compgen_tf")
class MetaSeq2Seq(Seq2SeqModel):
    """Seq2seq learner that translates queries in the context of a support set.

    The input encoder (embedding + stacked biLSTM, directions summed) encodes the
    support commands and the query; the output encoder (same shape) encodes the
    support actions. The final states of the support commands are the keys K and
    those of the support actions the values V of a `KeyValueMemory`; each query
    step h_t reads M_t = softmax(h_t Kᵀ/√m) V, and C_t = tanh(W_c1 [h_t; M_t]).
    The decoder (stacked LSTM, hidden states initialised to C_T, cell states to
    zero) attends over C with Luong dot-product attention, predicts from
    tanh(W_c2 [g_j; u_j]); without decoder attention it predicts from g_j. One
    call handles one episode: every query shares the same support set.

    Args:
        source_words: every command word any episode may use.
        target_words: every action token any episode may use.
        embedding_dim: size of the symbol embeddings (m in the paper, 200).
        hidden_units: LSTM units per direction and of the decoder (m, 200).
        num_layers: LSTM layers of each encoder and of the decoder (2).
        dropout: dropout on every embedding and between LSTM layers (0.5).
        support_loss: whether training also asks the model to translate the
            support items as queries (the paper's support loss; on by default).
            Stored with the model; used by the meta-trainer.
        decoder_attention: False gives the "no decoder attention" ablation:
            the decoder only sees C_T.
        scaled_decoder_attention: True divides the decoder's attention scores
            by √m, u_j = Attention(g_j, C, C) with the memory's eq. (2), as the
            paper writes it; False (the default, and what the results to date
            were trained with) uses plain dot products g_j·C_t.
        memory: False gives the paper's "standard seq2seq" comparison: the same
            network without the memory (C_t = h_t, the decoder starts from the
            query's final encoder state); the support set is ignored.
        max_input_length, max_output_length: see `Seq2SeqModel`.
        **kwargs: passed to `keras.Model`.

    Call arguments (`call((support_command_ids, support_action_ids, query_ids,
        target_ids), training)`): teacher-forced logits
        (queries, target_length, target_vocabulary_size). Ids are padded with 0
        and end with `<eos>`, as `encode_commands` / `encode_actions` make them.

    Example:
        >>> model = MetaSeq2Seq(["dax", "lug"], ["RED", "BLUE"], hidden_units=8,
        ...                     embedding_dim=8)
        >>> model.translate_episode(["dax"], ["RED"], ["dax lug"])  # untrained
        ['...']

    References:
        Lake (2019), Compositional generalization through meta sequence-to-sequence
        learning, NeurIPS, Sec. 3; Luong, Pham & Manning (2015).
    """

    def __init__(self, source_words, target_words, embedding_dim=200, hidden_units=200,
                 num_layers=2, dropout=0.5, support_loss=True, decoder_attention=True, memory=True,
                 scaled_decoder_attention=False, **kwargs):
        kwargs.setdefault("max_input_length", 32)
        kwargs.setdefault("max_output_length", 64)
        super().__init__(source_words, target_words, **kwargs)
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.hidden_units = positive_int("hidden_units", hidden_units)
        self.num_layers = positive_int("num_layers", num_layers)
        self.dropout_rate = rate("dropout", dropout)
        self.support_loss = bool(support_loss)
        self.decoder_attention = bool(decoder_attention)
        self.scaled_decoder_attention = bool(scaled_decoder_attention)
        self.use_memory = bool(memory)
        units = self.hidden_units
        # N(0, 1) embeddings (PyTorch's default, as in the paper's implementation): with Keras'
        # uniform(-0.05, 0.05) the keys start nearly equal and meta-training stays on the plateau
        # where the memory is ignored.
        normal = keras.initializers.RandomNormal(0.0, 1.0)
        self.target_lookup = keras.layers.StringLookup(
            vocabulary=[SOS, EOS] + self.target_vocabulary.words, mask_token=PAD,
            oov_token=UNK, output_mode="int", name="target_lookup")
        self.input_embedding = keras.layers.Embedding(
            self.source_vocabulary_size, self.embedding_dim, embeddings_initializer=normal,
            name="input_embedding")
        self.output_embedding = keras.layers.Embedding(
            self.target_vocabulary_size, self.embedding_dim, embeddings_initializer=normal,
            name="output_embedding")
        self.decoder_embedding = keras.layers.Embedding(
            self.target_vocabulary_size, self.embedding_dim, embeddings_initializer=normal,
            name="decoder_embedding")
        self.input_encoder = [self._bilstm(f"input_encoder_{i}") for i in range(self.num_layers)]
        self.output_encoder = [self._bilstm(f"output_encoder_{i}")
                               for i in range(self.num_layers)]
        self.memory = KeyValueMemory(name="memory")
        self.context_layer = keras.layers.Dense(units, activation="tanh", name="context")
        self.decoder = [keras.layers.LSTM(units, return_sequences=True, name=f"decoder_{i}")
                        for i in range(self.num_layers)]
        self.attentional_layer = keras.layers.Dense(units, activation="tanh", name="attentional")
        self.output_layer = keras.layers.Dense(self.target_vocabulary_size, name="output")
        self.dropout_layer = keras.layers.Dropout(self.dropout_rate, name="dropout")

    def _bilstm(self, name):
        # Two LSTMs rather than `keras.layers.Bidirectional`: loading a model with several
        # Bidirectional layers can fail in Keras 3.15 (its object-sharing scope matches the
        # id of a garbage-collected prototype LSTM and returns two backward layers).
        return [keras.layers.LSTM(self.hidden_units, return_sequences=True, return_state=True,
                                  zero_output_for_mask=True, go_backwards=backwards,
                                  name=f"{name}_{'backward' if backwards else 'forward'}")
                for backwards in (False, True)]

    # ----------------------------------------------------------------- network
    def _encode(self, embedding, layers, ids, training):
        """(step outputs (B, T, m), final state (B, m), mask (B, T))."""
        mask = tf.not_equal(ids, PAD_ID)
        x = self.dropout_layer(embedding(ids), training=training)
        final = None
        for i, (forward, backward) in enumerate(layers):
            if i:
                x = self.dropout_layer(x, training=training)
            forward_x, forward_h, _ = forward(x, mask=mask, training=training)
            backward_x, backward_h, _ = backward(x, mask=mask, training=training)
            # The backward LSTM returns its outputs last step first.
            x = forward_x + tf.reverse(backward_x, axis=[1])
            final = forward_h + backward_h
        return x, final, mask

    def encode_episode(self, support_command_ids, support_action_ids, query_ids, training=False):
        """The stepwise context of the queries.

        Returns:
            context C (queries, T, m), its mask (queries, T), C_T (queries, m), and
            the memory attention (queries, T, support).
        """
        if not self.use_memory:
            steps, final, mask = self._encode(self.input_embedding, self.input_encoder,
                                              query_ids, training)
            shape = tf.stack([tf.shape(query_ids)[0], tf.shape(query_ids)[1],
                              tf.shape(support_command_ids)[0]])
            return steps, mask, final, tf.zeros(shape, steps.dtype)
        _, keys, _ = self._encode(self.input_embedding, self.input_encoder, support_command_ids,
                                  training)
        _, values, _ = self._encode(self.output_embedding, self.output_encoder,
                                    support_action_ids, training)
        steps, _, mask = self._encode(self.input_embedding, self.input_encoder, query_ids,
                                      training)
        queries = tf.shape(query_ids)[0]
        keys = tf.tile(keys[None], [queries, 1, 1])
        values = tf.tile(values[None], [queries, 1, 1])
        steps = tf.identity(steps)  # drops the Keras mask: the memory takes it explicitly
        read, memory_attention = self.memory(steps, keys, values, query_mask=mask)
        context = self.context_layer(tf.concat([steps, read], axis=-1))
        context *= tf.cast(mask, context.dtype)[:, :, None]
        last = tf.maximum(tf.reduce_sum(tf.cast(mask, tf.int32), axis=1) - 1, 0)
        last_context = tf.gather(context, last, batch_dims=1)
        return context, mask, last_context, memory_attention

    def _initial_states(self, last_context):
        zeros = tf.zeros_like(last_context)
        return [[last_context, zeros] for _ in range(self.num_layers)]

    def _predict(self, decoder_outputs, context, mask):
        """Logits (and decoder attention) from decoder outputs (B, J, m)."""
        if not self.decoder_attention:
            batch, steps = tf.shape(decoder_outputs)[0], tf.shape(decoder_outputs)[1]
            return (self.mask_special_logits(self.output_layer(decoder_outputs)),
                    tf.zeros([batch, steps, tf.shape(context)[1]], decoder_outputs.dtype))
        scores = tf.einsum("bjm,btm->bjt", decoder_outputs, context)
        if self.scaled_decoder_attention:
            scores *= tf.math.rsqrt(tf.cast(tf.shape(context)[-1], scores.dtype))
        scores = tf.where(mask[:, None, :], scores, _NEG_INF)
        attention = tf.nn.softmax(scores, axis=-1)
        attended = tf.einsum("bjt,btm->bjm", attention, context)
        hidden = self.attentional_layer(tf.concat([decoder_outputs, attended], axis=-1))
        return self.mask_special_logits(self.output_layer(hidden)), attention

    def compute_episode_logits(self, support_command_ids, support_action_ids, query_ids,
                               target_ids, training=False):
        """Teacher-forced logits (queries, target_length, target_vocabulary_size)."""
        context, mask, last_context, _ = self.encode_episode(
            support_command_ids, support_action_ids, query_ids, training)
        if not self.decoder_attention:
            context, mask = last_context[:, None, :], tf.ones_like(mask[:, :1])
        previous = tf.concat([tf.fill([tf.shape(target_ids)[0], 1], SOS_ID),
                              target_ids[:, :-1]], axis=1)
        x = self.dropout_layer(self.decoder_embedding(previous), training=training)
        for i, (layer, state) in enumerate(zip(self.decoder, self._initial_states(last_context))):
            if i:
                x = self.dropout_layer(x, training=training)
            x = layer(x, initial_state=state, training=training)
        return self._predict(x, context, mask)[0]

    def greedy_decode_episode(self, support_command_ids, support_action_ids, query_ids,
                              max_length=None):
        """Greedy decoding of the queries of one episode.

        Returns:
            ids (queries, max_length) with `<pad>` after each `<eos>`, the decoder
            attention (queries, max_length, T) and the memory attention
            (queries, T, support).
        """
        max_length = int(max_length or self.max_output_length)
        context, mask, last_context, memory_attention = self.encode_episode(
            support_command_ids, support_action_ids, query_ids, training=False)
        attend_context, attend_mask = context, mask
        if not self.decoder_attention:
            attend_context, attend_mask = last_context[:, None, :], tf.ones_like(mask[:, :1])
        batch = tf.shape(query_ids)[0]
        states = self._initial_states(last_context)
        tokens = tf.fill([batch], SOS_ID)
        done = tf.zeros([batch], tf.bool)
        out_ids = tf.TensorArray(tf.int32, size=max_length)
        out_attention = tf.TensorArray(context.dtype, size=max_length)

        def step(j, tokens, done, states, out_ids, out_attention):
            x = self.decoder_embedding(tokens)
            new_states = []
            for layer, state in zip(self.decoder, states):
                x, state = layer.cell(x, state, training=False)
                new_states.append(list(state))
            logits, attention = self._predict(x[:, None, :], attend_context, attend_mask)
            predicted = tf.cast(tf.argmax(logits[:, 0], axis=-1), tf.int32)
            predicted = tf.where(done, PAD_ID, predicted)
            attention = attention[:, 0] * tf.cast(~done, attention.dtype)[:, None]
            return (j + 1, predicted, done | tf.equal(predicted, EOS_ID), new_states,
                    out_ids.write(j, predicted), out_attention.write(j, attention))

        _, _, _, _, out_ids, out_attention = tf.while_loop(
            lambda j, *_: j < max_length, step,
            (tf.constant(0), tokens, done, states, out_ids, out_attention))
        ids = tf.transpose(out_ids.stack(), [1, 0])
        attention = tf.transpose(out_attention.stack(), [1, 0, 2])
        if not self.decoder_attention:
            attention = tf.zeros([batch, max_length, tf.shape(context)[1]], attention.dtype)
        return ids, attention, memory_attention

    def call(self, inputs, training=False):
        return self.compute_episode_logits(*inputs, training=training)

    def build(self, input_shape=None):
        if self.built:
            return
        ids = tf.fill([1, 2], EOS_ID)
        self.compute_episode_logits(ids, ids, ids, ids, training=False)
        self.greedy_decode_episode(ids, ids, ids, max_length=1)
        self.target_lookup(tf.constant([EOS]))
        keras.Model.build(self, input_shape)

    # -------------------------------------------------------------- text <-> ids
    def encode_support_actions(self, actions):
        """Action strings (batch,) → (ids (batch, length) ending with `<eos>`, error (batch,))."""
        actions = tf.convert_to_tensor(actions, dtype=tf.string)
        tokens = tf.strings.split(tf.strings.strip(actions))
        ids = tf.cast(self.target_lookup(tokens), tf.int32)
        is_unknown = tf.equal(ids, 1)
        unknown = tf.strings.reduce_join(tf.ragged.boolean_mask(tokens, is_unknown), axis=1,
                                         separator=" ")
        error = tf.where(tf.reduce_any(is_unknown, axis=1),
                         tf.strings.join(["unknown action(s): ", unknown]), "")
        error = tf.where(tf.equal(tokens.row_lengths(), 0), "empty actions", error)
        batch = tf.shape(actions)[0]
        ids = tf.concat([ids, tf.RaggedTensor.from_tensor(tf.fill([batch, 1], EOS_ID))], axis=1)
        return ids.to_tensor(default_value=PAD_ID), error

    def encode_episode_arrays(self, support_commands, support_actions, query_commands,
                              query_actions=None):
        """Python-side ids of one episode (raises on unknown words): a tuple of int32 arrays.

        (support command ids, support action ids, query ids[, target ids]).
        """
        out = [_ids(self.source_vocabulary, support_commands),
               _ids(self.target_vocabulary, support_actions),
               _ids(self.source_vocabulary, query_commands)]
        if query_actions is not None:
            out.append(_ids(self.target_vocabulary, query_actions))
        return tuple(out)

    def translate_episode(self, support_commands, support_actions, query_commands,
                          batch_size=512):
        """Greedy translations of `query_commands` given the support pairs (a list of strings)."""
        support_commands = _as_str_list(support_commands)
        support_actions = _as_str_list(support_actions)
        query_commands = _as_str_list(query_commands)
        if (self.use_memory and not support_commands) or \
                len(support_commands) != len(support_actions):
            raise ValueError(f"need as many support actions as support commands (at least "
                             f"one), got {len(support_commands)} and {len(support_actions)}")
        self.check_commands(support_commands + query_commands)
        self.build()
        support_ids, action_ids, _ = self.encode_episode_arrays(support_commands,
                                                                 support_actions, [])
        outputs = []
        for start in range(0, len(query_commands), batch_size):
            query_ids = _ids(self.source_vocabulary, query_commands[start:start + batch_size])
            ids = self._decode_graph(support_ids, action_ids, query_ids)
            actions, _ = self.decode_actions(ids)
            outputs.extend(a.decode() for a in actions.numpy())
        return outputs

    @tf.function(reduce_retracing=True)
    def _decode_graph(self, support_ids, action_ids, query_ids):
        return self.greedy_decode_episode(support_ids, action_ids, query_ids)[0]

    def translate(self, commands, batch_size=256):
        raise TypeError("MetaSeq2Seq translates queries in the context of a support set: use "
                        "translate_episode(support_commands, support_actions, query_commands)")

    def serve_episode(self, support_commands, support_actions, query_commands):
        """Strings in, strings out, never raising: the export signature.

        Returns {"actions", "error"} for the queries; a bad support item puts its
        error on every query.
        """
        self.build()
        support_ids, support_error = self.encode_commands(support_commands)
        action_ids, action_error = self.encode_support_actions(support_actions)
        query_ids, error = self.encode_commands(query_commands)
        messages = tf.concat([tf.strings.join(["support command: ", support_error]),
                              tf.strings.join(["support actions: ", action_error])], axis=0)
        flags = tf.concat([tf.not_equal(support_error, ""), tf.not_equal(action_error, "")],
                          axis=0)
        problem = tf.strings.reduce_join(tf.boolean_mask(messages, flags), separator="; ")
        problem = tf.cond(tf.not_equal(tf.size(support_commands), tf.size(support_actions)),
                          lambda: tf.constant("support commands and actions differ in number"),
                          lambda: problem)
        if self.use_memory:
            problem = tf.cond(tf.equal(tf.size(support_commands), 0),
                              lambda: tf.constant("empty support set"), lambda: problem)
        ok = tf.equal(problem, "")
        # With a broken support set, decode against a one-item dummy memory (answers are dropped).
        support_ids = tf.cond(ok, lambda: support_ids, lambda: tf.fill([1, 1], EOS_ID))
        action_ids = tf.cond(ok, lambda: action_ids, lambda: tf.fill([1, 1], EOS_ID))
        ids = self.greedy_decode_episode(support_ids, action_ids, query_ids)[0]
        return self.serving_outputs(ids, tf.where(ok, error, problem))

    def get_config(self):
        config = super().get_config()
        config.update({"embedding_dim": self.embedding_dim, "hidden_units": self.hidden_units,
                       "num_layers": self.num_layers, "dropout": self.dropout_rate,
                       "support_loss": self.support_loss,
                       "decoder_attention": self.decoder_attention,
                       "scaled_decoder_attention": self.scaled_decoder_attention,
                       "memory": self.use_memory})
        return config


def _ids(vocabulary, texts) -> np.ndarray:
    rows = [vocabulary.ids(t) + [EOS_ID] for t in texts]
    width = max((len(r) for r in rows), default=1)
    out = np.zeros((len(rows), width), np.int32)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return out
