"""Meta seq2seq's backbone (Lake 2019): two encoders, a key-value memory and an attention decoder."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import positive_int, rate
from compgen_tf.layers.key_value_memory import KeyValueMemory
from compgen_tf.layers.masked_attention import masked_softmax
from compgen_tf.models.backbone import Backbone
from compgen_tf.models.recurrent_decoder import RecurrentDecoder
from compgen_tf.tokens import SOS_ID

# N(0, 1) embeddings (PyTorch's default, as in the paper's implementation): with Keras'
# uniform(-0.05, 0.05) the keys start nearly equal and meta-training stays on the plateau
# where the memory is ignored.
_EMBEDDINGS_INITIALIZER = {"class_name": "RandomNormal", "config": {"mean": 0.0, "stddev": 1.0}}


@keras.saving.register_keras_serializable(package="compgen_tf")
class MetaDecoder(RecurrentDecoder):
    """Meta seq2seq's decoder: stacked LSTMs, then Luong attention over the query's context.

    The LSTMs' hidden states start at C_T (the query's last context), their cell states at
    zero (or at C_T too, with `cell_from_context`); the attention is computed after the
    recurrence (it does not feed back), so the teacher-forced pass runs the LSTMs over whole
    sequences. Output: tanh(W_c2 [g_j; u_j])
    with u_j the attention over C, or g_j alone without decoder attention.

    Args:
        vocabulary_size: output tokens, special tokens included.
        embedding_dim: size of the output-token embeddings.
        units: LSTM units (the width of the context).
        num_layers: stacked LSTM layers.
        dropout: dropout on the embeddings and between LSTM layers.
        decoder_attention: False: predict from the LSTM output alone.
        scaled_decoder_attention: divide the attention scores by √units.
        cell_from_context: start every layer's cell state at C_T as well (the authors'
            code does; the paper says only that g_0 is C_T).
        **kwargs: passed to `RecurrentDecoder`.

    Call arguments: see `RecurrentDecoder` (no `teacher_forced`: meta seq2seq is always
        teacher-forced); `memory` is `(context (B, T, units), context_mask (B, T),
        last_context (B, units))`.
    """

    def __init__(self, vocabulary_size, embedding_dim, units, num_layers=2, dropout=0.0,
                 decoder_attention=True, scaled_decoder_attention=False,
                 cell_from_context=False, **kwargs):
        super().__init__(vocabulary_size, **kwargs)
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.units = positive_int("units", units)
        self.num_layers = positive_int("num_layers", num_layers)
        self.dropout_rate = rate("dropout", dropout)
        self.decoder_attention = bool(decoder_attention)
        self.scaled_decoder_attention = bool(scaled_decoder_attention)
        self.cell_from_context = bool(cell_from_context)
        self.decoder_embedding = keras.layers.Embedding(
            vocabulary_size, self.embedding_dim,
            embeddings_initializer=keras.initializers.get(_EMBEDDINGS_INITIALIZER),
            name="decoder_embedding")
        self.recurrent_layers = [keras.layers.LSTM(self.units, return_sequences=True,
                                                   name=f"decoder_{i}")
                                 for i in range(self.num_layers)]
        self.attentional_layer = keras.layers.Dense(self.units, activation="tanh",
                                                    name="attentional")
        self.output_layer = keras.layers.Dense(vocabulary_size, name="output")
        self.dropout = keras.layers.Dropout(self.dropout_rate, name="decoder_dropout")

    def build_sublayers(self, memory_shapes):
        self.decoder_embedding.build((None, None))
        for i, layer in enumerate(self.recurrent_layers):
            layer.build((None, None, self.units if i else self.embedding_dim))
        if self.decoder_attention:
            self.attentional_layer.build((None, 2 * self.units))
        self.output_layer.build((None, self.units))

    def initial_state(self, memory):
        last_context = memory[2]
        cell = last_context if self.cell_from_context else ops.zeros_like(last_context)
        return [[last_context, cell] for _ in range(self.num_layers)]

    def attention_length(self, memory):
        return ops.shape(memory[0])[1]

    def predict_tokens(self, outputs, memory):
        """(logits (B, J, V), attention (B, J, T)) from LSTM outputs (B, J, units)."""
        context, mask, last_context = memory
        if not self.decoder_attention:
            return self.block_special_logits(self.output_layer(outputs)), None
        scores = ops.einsum("bjm,btm->bjt", outputs, context)
        if self.scaled_decoder_attention:
            scores = scores * ops.rsqrt(ops.cast(ops.shape(context)[-1], scores.dtype))
        attention = masked_softmax(scores, mask[:, None, :])
        attended = ops.einsum("bjt,btm->bjm", attention, context)
        hidden = self.attentional_layer(ops.concatenate([outputs, attended], axis=-1))
        return self.block_special_logits(self.output_layer(hidden)), attention

    def call(self, target_ids, memory, training=None, teacher_forced=None):
        if teacher_forced is not None:
            raise ValueError("meta seq2seq is always teacher-forced during training")
        previous = ops.concatenate([ops.full((ops.shape(target_ids)[0], 1), SOS_ID, "int32"),
                                    ops.cast(target_ids[:, :-1], "int32")], axis=1)
        x = self.dropout(self.decoder_embedding(previous), training=training)
        for i, (layer, state) in enumerate(zip(self.recurrent_layers,
                                               self.initial_state(memory))):
            if i:
                x = self.dropout(x, training=training)
            x = layer(x, initial_state=state, training=training)
        return self.predict_tokens(x, memory)[0]

    def step(self, previous_ids, state, memory, constants, training=False):
        x = self.decoder_embedding(previous_ids)
        new_state = []
        for layer, layer_state in zip(self.recurrent_layers, state):
            x, layer_state = layer.cell(x, layer_state, training=False)
            new_state.append(list(layer_state))
        logits, attention = self.predict_tokens(x[:, None, :], memory)
        return logits[:, 0], new_state, None if attention is None else attention[:, 0]

    def get_config(self):
        config = super().get_config()
        config.update({"embedding_dim": self.embedding_dim, "units": self.units,
                       "num_layers": self.num_layers, "dropout": self.dropout_rate,
                       "decoder_attention": self.decoder_attention,
                       "scaled_decoder_attention": self.scaled_decoder_attention,
                       "cell_from_context": self.cell_from_context})
        return config


@keras.saving.register_keras_serializable(package="compgen_tf")
class MetaSeq2SeqBackbone(Backbone):
    """Meta seq2seq's network, from an episode's ids to the queries' teacher-forced logits.

    Inputs (a dict): `support_command_ids` (support, length), `support_action_ids`
    (support, length), `source_ids` (queries, length: the query commands) and
    `target_ids` (queries, length). Every query of a call shares the one support set.
    The architecture and the arguments are described in `MetaSeq2Seq`.

    Args:
        source_vocabulary_size, target_vocabulary_size: token counts, special tokens
            included.
        embedding_dim, hidden_units, num_layers, dropout, decoder_attention,
            scaled_decoder_attention, decoder_cell_from_context, memory: see `MetaSeq2Seq`.
        **kwargs: passed to `keras.Model` (`name`, `trainable`).
    """

    def __init__(self, source_vocabulary_size, target_vocabulary_size, embedding_dim=200,
                 hidden_units=200, num_layers=2, dropout=0.5, decoder_attention=True,
                 scaled_decoder_attention=False, decoder_cell_from_context=False, memory=True,
                 **kwargs):
        self.set_vocabulary_sizes(source_vocabulary_size, target_vocabulary_size)
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.hidden_units = positive_int("hidden_units", hidden_units)
        self.num_layers = positive_int("num_layers", num_layers)
        self.dropout_rate = rate("dropout", dropout)
        self.decoder_attention = bool(decoder_attention)
        self.scaled_decoder_attention = bool(scaled_decoder_attention)
        self.decoder_cell_from_context = bool(decoder_cell_from_context)
        self.use_memory = bool(memory)
        # === Layers ===
        # An initializer instance each: one shared instance would give both tables the same
        # numbers (Keras fixes an unseeded initializer's seed when it is made).
        self.input_embedding = keras.layers.Embedding(
            self.source_vocabulary_size, self.embedding_dim,
            embeddings_initializer=keras.initializers.get(_EMBEDDINGS_INITIALIZER),
            name="input_embedding")
        self.output_embedding = keras.layers.Embedding(
            self.target_vocabulary_size, self.embedding_dim,
            embeddings_initializer=keras.initializers.get(_EMBEDDINGS_INITIALIZER),
            name="output_embedding")
        self.input_encoder = [self._bilstm(f"input_encoder_{i}") for i in range(self.num_layers)]
        self.output_encoder = [self._bilstm(f"output_encoder_{i}")
                               for i in range(self.num_layers)]
        self.memory = KeyValueMemory(name="memory")
        self.context_layer = keras.layers.Dense(self.hidden_units, activation="tanh",
                                                name="context")
        self.encoder_dropout = keras.layers.Dropout(self.dropout_rate, name="encoder_dropout")
        self.decoder = MetaDecoder(
            self.target_vocabulary_size, self.embedding_dim, self.hidden_units,
            num_layers=self.num_layers, dropout=self.dropout_rate,
            decoder_attention=self.decoder_attention,
            scaled_decoder_attention=self.scaled_decoder_attention,
            cell_from_context=self.decoder_cell_from_context, name="decoder")
        # === Functional model ===
        inputs = {name: keras.Input((None,), dtype="int32", name=name)
                  for name in ("support_command_ids", "support_action_ids", "source_ids",
                               "target_ids")}
        memory = self.encode(inputs["support_command_ids"], inputs["support_action_ids"],
                             inputs["source_ids"])
        self.make_functional(inputs, self.decoder(inputs["target_ids"], memory), **kwargs)

    def _bilstm(self, name):
        # Two LSTMs rather than `keras.layers.Bidirectional`: loading a model with several
        # Bidirectional layers can fail in Keras 3.15 (its object-sharing scope matches the
        # id of a garbage-collected prototype LSTM and returns two backward layers).
        return [keras.layers.LSTM(self.hidden_units, return_sequences=True, return_state=True,
                                  zero_output_for_mask=True, go_backwards=backwards,
                                  name=f"{name}_{'backward' if backwards else 'forward'}")
                for backwards in (False, True)]

    def _encode(self, embedding, layers, ids, training):
        """(step outputs (B, T, m), final state (B, m), mask (B, T))."""
        mask = self.source_mask(ids)
        x = self.encoder_dropout(embedding(ids), training=training)
        final = None
        for i, (forward, backward) in enumerate(layers):
            if i:
                x = self.encoder_dropout(x, training=training)
            forward_x, forward_h, _ = forward(x, mask=mask, training=training)
            backward_x, backward_h, _ = backward(x, mask=mask, training=training)
            # The backward LSTM returns its outputs last step first.
            x = forward_x + ops.flip(backward_x, axis=1)
            final = forward_h + backward_h
        return x, final, mask

    def encode(self, support_command_ids, support_action_ids, query_ids, training=False,
               return_memory_attention=False):
        """The decoder's memory: `(context C (queries, T, m), its mask (queries, T),
        C_T (queries, m))`, and with `return_memory_attention` also the memory attention
        (queries, T, support).

        Without decoder attention the decoder reads C_T alone: C is then C_T
        (queries, 1, m) with an all-true mask. Without the memory, C is the query's
        encoder outputs and the memory attention is zero.
        """
        steps, final, mask = self._encode(self.input_embedding, self.input_encoder, query_ids,
                                          training)
        if self.use_memory:
            _, keys, _ = self._encode(self.input_embedding, self.input_encoder,
                                      support_command_ids, training)
            _, values, _ = self._encode(self.output_embedding, self.output_encoder,
                                        support_action_ids, training)
            read, memory_attention = self.memory(steps, keys, values, query_mask=mask)
            context = self.context_layer(ops.concatenate([steps, read], axis=-1))
            context = context * ops.cast(mask, context.dtype)[:, :, None]
            last = ops.maximum(ops.sum(ops.cast(mask, "int32"), axis=1) - 1, 0)
            last_context = ops.take_along_axis(context, last[:, None, None], axis=1)[:, 0]
        else:
            context, last_context = steps, final
            memory_attention = None
        if not self.decoder_attention:
            context = last_context[:, None, :]
            mask = ops.ones_like(mask[:, :1])
        if not return_memory_attention:
            return context, mask, last_context
        if memory_attention is None:
            memory_attention = ops.zeros((ops.shape(query_ids)[0], ops.shape(query_ids)[1],
                                          ops.shape(support_command_ids)[0]), steps.dtype)
        return (context, mask, last_context), memory_attention

    def get_config(self):
        config = super().get_config()
        config.update({"source_vocabulary_size": self.source_vocabulary_size,
                       "target_vocabulary_size": self.target_vocabulary_size,
                       "embedding_dim": self.embedding_dim, "hidden_units": self.hidden_units,
                       "num_layers": self.num_layers, "dropout": self.dropout_rate,
                       "decoder_attention": self.decoder_attention,
                       "scaled_decoder_attention": self.scaled_decoder_attention,
                       "decoder_cell_from_context": self.decoder_cell_from_context,
                       "memory": self.use_memory})
        return config
