"""`TransformerDecoderLayer`: causal self-attention, attention over the encoder, feed-forward."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.layers.relative_attention import RelativeAttention
from compgen_tf.layers.transformer_encoder_layer import TransformerEncoderLayer


@keras.saving.register_keras_serializable(package="compgen_tf")
class TransformerDecoderLayer(TransformerEncoderLayer):
    """One decoder layer of the Transformer (post-norm): an encoder layer whose self-attention
    reads only earlier positions, with attention over the encoder's outputs between the two.

    x ← LayerNorm(x + Dropout(CausalSelfAttention(x))),
    x ← LayerNorm(x + Dropout(Attention(x, memory))),
    x ← LayerNorm(x + Dropout(FeedForward(x))). Relative keys (`max_distance` > 0) are in the
    self-attention only: query and memory positions are on different sequences.

    Teacher-forced, `call` computes every position at once. Greedy decoding calls `step`
    with one position at a time and a key/value cache of the positions before it, so that a
    step projects only its own token: the prefix is never computed again. Both give the
    same outputs up to float rounding.

    Args:
        width, num_heads, feedforward_dim, dropout, max_distance, attention_dropout: as for
            `TransformerEncoderLayer`.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        inputs: float (batch, target_length, width): the target positions so far.
        memory: float (batch, source_length, width): the encoder's outputs.
        memory_mask: optional bool (batch, source_length), True at real source positions.
        training: whether dropout is active.

    Returns:
        float (batch, target_length, width).

    Example:
        >>> layer = TransformerDecoderLayer(width=8, num_heads=2, feedforward_dim=16)
        >>> x, memory = np.zeros((2, 3, 8), "float32"), np.zeros((2, 5, 8), "float32")
        >>> layer(x, memory).shape
        (2, 3, 8)

    References:
        Vaswani et al. (2017), Attention is all you need.
    """

    def __init__(self, width, num_heads, feedforward_dim, dropout=0.0, max_distance=0,
                 attention_dropout=0.0, **kwargs):
        super().__init__(width, num_heads, feedforward_dim, dropout=dropout,
                         max_distance=max_distance, attention_dropout=attention_dropout,
                         **kwargs)
        self.cross_attention = RelativeAttention(self.num_heads, self.width // self.num_heads,
                                                 dropout=self.attention_dropout,
                                                 name="cross_attention",
                                                 dtype=self.dtype_policy)
        self.cross_norm = keras.layers.LayerNormalization(name="cross_norm",
                                                          dtype=self.dtype_policy)

    def build(self, inputs_shape, memory_shape=None, memory_mask_shape=None):
        super().build(inputs_shape)
        shape = (None, None, self.width)
        self.cross_attention.build(shape, shape)
        self.cross_norm.build(shape)

    def _after_self_attention(self, inputs, attended, memory_keys, memory_values, memory_mask,
                              training):
        """The rest of the layer once the self-attention is known: (outputs, the attention
        weights over the memory (batch, heads, target_length, source_length))."""
        x = self.attention_norm(inputs + self.dropout(attended, training=training))
        mask = None if memory_mask is None else ops.expand_dims(memory_mask, 1)
        read, weights = self.cross_attention.attend(x, memory_keys, memory_values,
                                                    attention_mask=mask, training=training)
        x = self.cross_norm(x + self.dropout(read, training=training))
        return self.feedforward(x, training=training), weights

    def call(self, inputs, memory, memory_mask=None, training=None):
        length = ops.shape(inputs)[1]
        positions = ops.arange(length, dtype="int32")
        causal = ops.expand_dims(positions[None, :] <= positions[:, None], 0)
        attended = self.self_attention(inputs, inputs, attention_mask=causal, training=training)
        keys, values = self.cross_attention.project_key_value(memory)
        return self._after_self_attention(inputs, attended, keys, values, memory_mask,
                                          training)[0]

    def step(self, inputs, position, cache, memory_keys_values, memory_mask=None,
             training=None):
        """One position of greedy decoding, reading and extending a key/value cache.

        Args:
            inputs: float (batch, 1, width): the position's input.
            position: scalar int tensor: its index t.
            cache: (keys, values), each (batch, max_length, heads, key_dim): the
                self-attention's projections of positions 0..t-1 (the rest is unread).
            memory_keys_values: the cross-attention's `project_key_value(memory)`, computed
                once per sequence.
            memory_mask: as in `call`.
            training: whether dropout is active.

        Returns:
            (outputs (batch, 1, width), the cache with position t written, the attention
            weights over the memory (batch, heads, 1, source_length)).
        """
        keys, values = self.self_attention.project_key_value(inputs)
        cache_positions = ops.arange(ops.shape(cache[0])[1], dtype="int32")
        at_t = ops.reshape(ops.equal(cache_positions, position), (1, -1, 1, 1))
        cache = (ops.where(at_t, keys, cache[0]), ops.where(at_t, values, cache[1]))
        # Position t reads positions 0..t, as row t of the causal mask in `call`.
        mask = ops.reshape(cache_positions <= position, (1, 1, -1))
        attended, _ = self.self_attention.attend(inputs, cache[0], cache[1],
                                                 attention_mask=mask, query_start=position,
                                                 training=training)
        outputs, weights = self._after_self_attention(inputs, attended, *memory_keys_values,
                                                      memory_mask, training)
        return outputs, cache, weights

    def compute_output_spec(self, inputs, memory, memory_mask=None, training=None):
        return keras.KerasTensor(inputs.shape, dtype=self.compute_dtype)
