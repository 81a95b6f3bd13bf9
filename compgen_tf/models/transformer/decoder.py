"""`TransformerDecoder`: the Transformer's decoder stack, teacher-forced at once or greedy with
a key/value cache."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import positive_int
from compgen_tf.layers.token_and_position_embedding import POSITIONS, TokenAndPositionEmbedding
from compgen_tf.models.recurrent_decoder import RecurrentDecoder
from compgen_tf.layers.transformer_decoder_layer import TransformerDecoderLayer
from compgen_tf.tokens import SOS_ID


def check_positions(positions, max_positions, max_relative_distance):
    """The backbone's position arguments, checked: (positions, max_positions, distance)."""
    if positions not in POSITIONS:
        raise ValueError(f"positions must be one of {list(POSITIONS)}, got {positions!r}")
    return (positions, positive_int("max_positions", max_positions),
            positive_int("max_relative_distance", max_relative_distance))


@keras.saving.register_keras_serializable(package="compgen_tf")
class TransformerDecoder(RecurrentDecoder):
    """The Transformer's decoder: target embeddings, `num_layers` `TransformerDecoderLayer`s
    (or one layer applied `num_layers` times when `universal`) and a projection to logits.

    Teacher-forced (`call`), every target position is computed at once: position t reads the
    target tokens before it (`<sos>` first) through the causal self-attention. Greedy
    decoding goes through the library's sampler (`RecurrentDecoder.greedy`) one position a
    step; the loop state is the step index and each layer's key/value cache
    (`greedy_state`), and the encoder's keys and values are projected once per sequence
    (`prepare`), so a step computes only its own position. Scheduled sampling (feeding the
    model its own outputs) needs the steps in turn and is not offered: `teacher_forced`
    must be None.

    Args:
        vocabulary_size: output tokens, special tokens included.
        width: the model's width (d_model).
        num_layers: decoder layers (applications of the one layer when `universal`).
        num_heads: attention heads.
        feedforward_dim: the feed-forward networks' hidden width.
        dropout: dropout rate on the embeddings and the residual branches.
        attention_dropout: dropout rate on the attention weights.
        positions: "sinusoidal" or "learned" absolute positions added to the embeddings,
            or "relative" (relative keys in the self-attention, no absolute positions).
        max_relative_distance: the relative keys' clip (used with "relative").
        max_positions: the learned positions' table size (used with "learned").
        universal: one layer's weights shared by every layer (Dehghani et al. 2019, without
            their adaptive halting and per-step timing signal).
        scale_embeddings: whether the token embeddings are multiplied by sqrt(width).
        **kwargs: passed to `RecurrentDecoder`.

    Call arguments:
        target_ids: int (batch, target_length): the targets, ending with `<eos>`, padded.
        memory: `(encoder_outputs (batch, source_length, width), source_mask (batch,
            source_length))`.
        training: whether dropout is active.
        teacher_forced: None.

    Returns:
        logits (batch, target_length, vocabulary_size).

    References:
        Vaswani et al. (2017), Attention is all you need; Shaw et al. (2018), Self-attention
        with relative position representations; Dehghani et al. (2019), Universal
        Transformers; Csordás, Irie & Schmidhuber (2021), The devil is in the detail.
    """

    def __init__(self, vocabulary_size, width, num_layers, num_heads, feedforward_dim,
                 dropout=0.0, positions="sinusoidal", max_relative_distance=16,
                 max_positions=128, universal=False, scale_embeddings=True,
                 attention_dropout=0.0, **kwargs):
        super().__init__(vocabulary_size, **kwargs)
        self.width = positive_int("width", width)
        self.num_layers = positive_int("num_layers", num_layers)
        self.positions, self.max_positions, self.max_relative_distance = check_positions(
            positions, max_positions, max_relative_distance)
        self.universal = bool(universal)
        self.scale_embeddings = bool(scale_embeddings)
        self.target_embedding = TokenAndPositionEmbedding(
            vocabulary_size, self.width, positions=self.positions,
            max_positions=self.max_positions, scale=self.scale_embeddings,
            name="target_embedding")
        distance = self.max_relative_distance if self.positions == "relative" else 0
        self.decoder_layers = [
            TransformerDecoderLayer(self.width, num_heads, feedforward_dim, dropout=dropout,
                                    max_distance=distance, attention_dropout=attention_dropout,
                                    name=f"decoder_layer_{i}")
            for i in range(1 if self.universal else self.num_layers)]
        self.embedding_dropout = keras.layers.Dropout(dropout, name="embedding_dropout")
        self.output_projection = keras.layers.Dense(vocabulary_size, name="output_projection")

    @property
    def applications(self):
        """The layers in the order they are applied (the one layer repeated when universal)."""
        return self.decoder_layers * (self.num_layers if self.universal else 1)

    def build_sublayers(self, memory_shapes):
        self.target_embedding.build((None, None))
        for layer in self.decoder_layers:
            layer.build((None, None, self.width))
        self.output_projection.build((None, None, self.width))

    def _embed(self, ids, start, training):
        return self.embedding_dropout(self.target_embedding(ids, start=start), training=training)

    def call(self, target_ids, memory, training=None, teacher_forced=None):
        if teacher_forced is not None:
            raise ValueError("the Transformer decodes every target position at once: it "
                             "cannot feed its own outputs back (teacher_forcing_ratio must "
                             "be 1)")
        encoder_outputs, source_mask = memory
        target_ids = ops.cast(target_ids, "int32")
        # Position t reads the target before it: `<sos>`, then the targets shifted right.
        starts = ops.full((ops.shape(target_ids)[0], 1), SOS_ID, "int32")
        previous = ops.concatenate([starts, target_ids[:, :-1]], axis=1)
        x = self._embed(previous, 0, training)
        for layer in self.applications:
            x = layer(x, encoder_outputs, source_mask, training=training)
        return self.block_special_logits(self.output_projection(x))

    # Greedy decoding runs in loops of this many steps, the cache padded between them, so a
    # step reads and writes a cache as long as the steps so far need: decoding COGS (up to
    # 481 steps) with one cache of 481 positions cost every step what the last one costs.
    greedy_segment = 32

    def grow_greedy_state(self, state, steps):
        """The cache padded with zeros to `steps` positions (never read before written)."""
        position, caches = state
        grown = []
        for cache in caches:
            extra = steps - cache[0].shape[1]
            grown.append(tuple(ops.pad(part, ((0, 0), (0, extra), (0, 0), (0, 0)))
                               for part in cache))
        return position, tuple(grown)

    def greedy_state(self, memory, lengths, max_length):
        """(step index 0, a zero key/value cache of `max_length` positions per application)."""
        batch = ops.shape(memory[0])[0]
        attention = self.decoder_layers[0].self_attention
        shape = (batch, max_length, attention.num_heads, attention.key_dim)
        caches = tuple((ops.zeros(shape, self.compute_dtype), ops.zeros(shape, self.compute_dtype))
                       for _ in self.applications)
        return ops.convert_to_tensor(0, "int32"), caches

    def initial_state(self, memory):
        raise ValueError("the Transformer's decoding state is its key/value cache, whose "
                         "length is that of the decoding: use greedy_state")

    def prepare(self, memory):
        """Each layer's keys and values of the encoder's outputs, once per sequence."""
        return tuple(layer.cross_attention.project_key_value(memory[0])
                     for layer in self.decoder_layers)

    def step(self, previous_ids, state, memory, constants, training=False):
        position, caches = state
        x = self._embed(ops.expand_dims(previous_ids, 1), position, training)
        new_caches = []
        for index, (layer, cache) in enumerate(zip(self.applications, caches)):
            # A universal layer reads the same memory keys and values at every application.
            memory_keys_values = constants[0 if self.universal else index]
            x, cache, weights = layer.step(x, position, cache, memory_keys_values, memory[1],
                                           training=training)
            new_caches.append(cache)
        logits = self.block_special_logits(self.output_projection(x[:, 0]))
        # The attention shown for a step: the last layer's over the source, mean of its heads.
        return logits, (position + 1, tuple(new_caches)), ops.mean(weights[:, :, 0], axis=1)

    def compute_output_spec(self, target_ids, memory, training=None, teacher_forced=None):
        return keras.KerasTensor((target_ids.shape[0], target_ids.shape[1],
                                  self.vocabulary_size), dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        layer = self.decoder_layers[0]
        config.update({"width": self.width, "num_layers": self.num_layers,
                       "num_heads": layer.num_heads, "feedforward_dim": layer.feedforward_dim,
                       "dropout": layer.dropout_rate, "positions": self.positions,
                       "max_relative_distance": self.max_relative_distance,
                       "max_positions": self.max_positions, "universal": self.universal,
                       "scale_embeddings": self.scale_embeddings,
                       "attention_dropout": layer.attention_dropout})
        return config
