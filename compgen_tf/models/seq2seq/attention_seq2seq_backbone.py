"""The LSTM seq2seq baseline's backbone: a bidirectional LSTM encoder and a Luong-attention decoder."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import positive_int, rate
from compgen_tf.layers.masked_attention import masked_softmax
from compgen_tf.models.backbone import Backbone
from compgen_tf.models.lstm_inference import bidirectional_lstm
from compgen_tf.models.recurrent_decoder import RecurrentDecoder


@keras.saving.register_keras_serializable(package="compgen_tf")
class LuongAttentionDecoder(RecurrentDecoder):
    """An LSTM decoder with Luong dot-product attention over the encoder's outputs.

    At step t the LSTM reads the previous output token's embedding, its new hidden state
    h_t scores every encoder output e_j by h_t·e_j (padding masked), and the token is
    predicted from tanh(W_c[h_t; context_t]).

    Args:
        vocabulary_size: output tokens, special tokens included.
        embedding_dim: size of the output-token embeddings.
        units: LSTM units (the width of the encoder outputs it attends over).
        dropout: dropout rate on the token embeddings and on the attentional vector.
        count_input: whether the LSTM also reads the number of tokens still to emit before
            `<eos>` (the target's length in training, the given `lengths` in greedy
            decoding, counted down by one a step). Needs each row's length: a model with a
            length head.
        count_cap: when > 0, the count is shown capped at this value (the longest
            training output), so that it never takes a value unseen in training.
        count_attention: whether the count also enters the attention: the score of
            source position j gains (count) · (u · e_j), with u learned (zeros at first).
        **kwargs: passed to `RecurrentDecoder`.

    Call arguments: see `RecurrentDecoder`; `memory` is `(encoder_outputs (B, S, units),
        source_mask (B, S), [h, c])`.

    References:
        Luong, Pham & Manning (2015), Effective approaches to attention-based NMT.
    """

    def __init__(self, vocabulary_size, embedding_dim, units, dropout=0.0, count_input=False,
                 count_cap=0, count_attention=False, **kwargs):
        super().__init__(vocabulary_size, **kwargs)
        self.count_input = bool(count_input)
        self.count_attention = bool(count_attention)
        self.count_cap = float(count_cap)
        if self.count_cap < 0:
            raise ValueError(f"count_cap must be >= 0 (0: no cap), got {count_cap}")
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.units = positive_int("units", units)
        self.dropout_rate = rate("dropout", dropout)
        self.target_embedding = keras.layers.Embedding(vocabulary_size, self.embedding_dim,
                                                       name="target_embedding")
        self.cell = keras.layers.LSTMCell(self.units, name="decoder_cell")
        self.attention_combine = keras.layers.Dense(self.units, activation="tanh",
                                                    name="attention_combine")
        self.output_projection = keras.layers.Dense(vocabulary_size, name="output_projection")
        self.dropout = keras.layers.Dropout(self.dropout_rate, name="decoder_dropout")

    def build_sublayers(self, memory_shapes):
        self.target_embedding.build((None,))
        self.cell.build((None, self.embedding_dim + (1 if self.count_input else 0)))
        self.attention_combine.build((None, self.units + memory_shapes[0][-1]))
        self.output_projection.build((None, self.units))
        if self.count_attention:
            # Attention score of source position j gains (count left) · (u · e_j).
            self.count_key = self.add_weight(shape=(memory_shapes[0][-1],),
                                             initializer="zeros", name="count_key")

    def initial_state(self, memory):
        return list(memory[2])

    def start_state(self, memory, lengths):
        if not (self.count_input or self.count_attention):
            return self.initial_state(memory)
        if lengths is None:
            raise ValueError("a decoder with count_input or count_attention needs each "
                             "row's output length (a length head)")
        # The actions still to emit, counted down by one at every step.
        left = ops.expand_dims(ops.cast(lengths, self.compute_dtype), -1)
        return self.initial_state(memory) + [left]

    def step(self, previous_ids, state, memory, constants, training=False):
        encoder_outputs, mask, _ = memory
        embedded = self.dropout(self.target_embedding(previous_ids), training=training)
        counted = self.count_input or self.count_attention
        if counted:
            state, left = state[:-1], state[-1]
            shown = ops.minimum(left, self.count_cap) if self.count_cap else left
        if self.count_input:
            embedded = ops.concatenate([embedded, ops.cast(shown, embedded.dtype)], -1)
        hidden, state = self.cell(embedded, state, training=training)
        if counted:
            state = list(state) + [left - 1.0]
        scores = ops.einsum("bd,bsd->bs", hidden, encoder_outputs)
        if self.count_attention:
            keyed = ops.einsum("d,bsd->bs", ops.cast(self.count_key, encoder_outputs.dtype),
                               encoder_outputs)
            scores = scores + ops.cast(shown, scores.dtype) * keyed
        weights = masked_softmax(scores, mask)
        context = ops.einsum("bs,bsd->bd", weights, encoder_outputs)
        attentional = self.attention_combine(ops.concatenate([hidden, context], -1))
        logits = self.output_projection(self.dropout(attentional, training=training))
        return self.block_special_logits(logits), list(state), weights

    def get_config(self):
        config = super().get_config()
        config.update({"embedding_dim": self.embedding_dim, "units": self.units,
                       "dropout": self.dropout_rate, "count_input": self.count_input,
                       "count_cap": self.count_cap, "count_attention": self.count_attention})
        return config


@keras.saving.register_keras_serializable(package="compgen_tf")
class AttentionSeq2SeqBackbone(Backbone):
    """The baseline's network: embedding → bidirectional LSTM → `LuongAttentionDecoder`.

    The decoder (width 2·`hidden_units`) starts from the concatenated final states of the
    two encoder directions.

    Args:
        source_vocabulary_size, target_vocabulary_size: token counts, special tokens included.
        embedding_dim: size of the token embeddings.
        hidden_units: LSTM units of each encoder direction.
        dropout: dropout rate on embeddings and on the attentional vector.
        count_input, count_cap, count_attention: see `LuongAttentionDecoder`.
        **kwargs: passed to `keras.Model` (`name`, `trainable`).

    Example:
        >>> backbone = AttentionSeq2SeqBackbone(8, 10, embedding_dim=4, hidden_units=4)
        >>> logits = backbone({"source_ids": np.ones((2, 5), "int32"),
        ...                    "target_ids": np.ones((2, 3), "int32")})  # (2, 3, 10)
    """

    def __init__(self, source_vocabulary_size, target_vocabulary_size, embedding_dim=64,
                 hidden_units=64, dropout=0.1, count_input=False, count_cap=0,
                 count_attention=False, **kwargs):
        self.set_vocabulary_sizes(source_vocabulary_size, target_vocabulary_size)
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.hidden_units = positive_int("hidden_units", hidden_units)
        self.dropout_rate = rate("dropout", dropout)
        # === Layers ===
        self.source_embedding = keras.layers.Embedding(
            self.source_vocabulary_size, self.embedding_dim, name="source_embedding")
        self.source_dropout = keras.layers.Dropout(self.dropout_rate, name="source_dropout")
        self.encoder = keras.layers.Bidirectional(
            keras.layers.LSTM(self.hidden_units, return_sequences=True, return_state=True),
            name="encoder")
        self.decoder = LuongAttentionDecoder(
            self.target_vocabulary_size, self.embedding_dim, 2 * self.hidden_units,
            dropout=self.dropout_rate, count_input=count_input, count_cap=count_cap,
            count_attention=count_attention, name="decoder")
        # === Functional model ===
        self.finish(*self.inputs_spec(), **kwargs)

    def encode(self, source_ids, training=False):
        """`(encoder_outputs (B, S, 2H), source_mask (B, S), [h, c])`: the decoder's memory."""
        mask = self.source_mask(source_ids)
        embedded = self.source_dropout(self.source_embedding(source_ids), training=training)
        outputs, fw_h, fw_c, bw_h, bw_c = bidirectional_lstm(self.encoder, embedded, mask,
                                                             training=training)
        return outputs, mask, [ops.concatenate([fw_h, bw_h], -1),
                               ops.concatenate([fw_c, bw_c], -1)]

    def get_config(self):
        config = super().get_config()
        config.update({"source_vocabulary_size": self.source_vocabulary_size,
                       "target_vocabulary_size": self.target_vocabulary_size,
                       "embedding_dim": self.embedding_dim, "hidden_units": self.hidden_units,
                       "dropout": self.dropout_rate, "count_input": self.decoder.count_input,
                       "count_cap": self.decoder.count_cap,
                       "count_attention": self.decoder.count_attention})
        return config
