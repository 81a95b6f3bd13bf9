"""`RelativeAttention`: multi-head attention with optional Shaw-style relative position keys."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import non_negative, positive_int, rate
from compgen_tf.layers.masked_attention import masked_softmax


@keras.saving.register_keras_serializable(package="compgen_tf")
class RelativeAttention(keras.layers.Layer):
    """Scaled dot-product multi-head attention whose scores may also read relative positions.

    Each head h scores query i against key j by

        e_hij = q_hi · (k_hj + a_clip(j - i)) / sqrt(key_dim)

    where q = x W^Q, k = m W^K, v = m W^V are the head's projections and a_d (one learned
    vector of `key_dim` numbers for each clipped distance d in [-max_distance, max_distance])
    is the relative key of Shaw et al. (2018, eq. 4-5); with `max_distance=0` there is no
    relative term (plain attention, e.g. over an encoder's outputs). The weights are the
    softmax over the unmasked keys; the heads' weighted values are concatenated and
    projected back to the query's width.

    The projection of the keys and values (`project_key_value`) is apart from the attention
    (`attend`), so that a decoder can keep the keys and values of the steps it has decoded
    (a key/value cache) and attend over them with one new query: `query_start` gives the
    position of the first query, which the relative distances need.

    Keras' own `MultiHeadAttention` has no relative term and no way to attend over keys
    projected before, and keras-hub's layers import `tensorflow-text` (which needs the full
    `tensorflow` wheel, not `tensorflow-cpu`): this layer is written in `keras.ops`.

    Args:
        num_heads: number of heads.
        key_dim: size of each head's queries, keys and values.
        max_distance: the clip of the relative distance (0: no relative keys).
        dropout: dropout rate on the attention weights.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        query: float (batch, query_length, query_width).
        value: float (batch, key_length, value_width): what the keys and values are
            projected from.
        attention_mask: optional bool broadcastable to (batch, query_length, key_length),
            True where a query may read a key.
        query_start: the position of the first query (an int or scalar int tensor; the keys'
            positions start at 0).
        training: whether dropout is active.
        return_attention_scores: also return the weights (batch, heads, query_length,
            key_length).

    Returns:
        float (batch, query_length, query_width), and with `return_attention_scores` the
        weights.

    Example:
        >>> layer = RelativeAttention(num_heads=2, key_dim=4, max_distance=3)
        >>> x = np.zeros((2, 5, 8), "float32")
        >>> layer(x, x).shape
        (2, 5, 8)

    References:
        Vaswani et al. (2017), Attention is all you need;
        Shaw, Uszkoreit & Vaswani (2018), Self-attention with relative position
        representations.
    """

    def __init__(self, num_heads, key_dim, max_distance=0, dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = positive_int("num_heads", num_heads)
        self.key_dim = positive_int("key_dim", key_dim)
        self.max_distance = int(non_negative("max_distance", max_distance))
        self.dropout_rate = rate("dropout", dropout)
        # Of this layer's dtype policy: one of the global policy would cast a mixed-precision
        # layer's weights back to float32.
        self.dropout = keras.layers.Dropout(self.dropout_rate, name="attention_dropout",
                                            dtype=self.dtype_policy)

    def build(self, query_shape, value_shape=None):
        value_shape = query_shape if value_shape is None else value_shape
        query_width, value_width = query_shape[-1], value_shape[-1]
        heads, size = self.num_heads, self.key_dim

        def weight(name, shape, initializer="glorot_uniform"):
            return self.add_weight(shape=shape, initializer=initializer, name=name)

        self.query_kernel = weight("query_kernel", (query_width, heads, size))
        self.query_bias = weight("query_bias", (heads, size), "zeros")
        self.key_kernel = weight("key_kernel", (value_width, heads, size))
        self.key_bias = weight("key_bias", (heads, size), "zeros")
        self.value_kernel = weight("value_kernel", (value_width, heads, size))
        self.value_bias = weight("value_bias", (heads, size), "zeros")
        self.output_kernel = weight("output_kernel", (heads, size, query_width))
        self.output_bias = weight("output_bias", (query_width,), "zeros")
        if self.max_distance:
            self.relative_keys = weight("relative_keys", (2 * self.max_distance + 1, size))
        self.built = True

    def _weight(self, variable):
        # In the compute dtype: under a mixed policy the weights are float32, and einsum
        # would promote the bfloat16 activations rather than cast the weights.
        return ops.cast(variable, self.compute_dtype)

    def project_key_value(self, value):
        """(keys, values), each (batch, key_length, heads, key_dim): the projections that a
        key/value cache keeps."""
        w = self._weight
        keys = ops.einsum("btd,dhk->bthk", value, w(self.key_kernel)) + w(self.key_bias)
        values = ops.einsum("btd,dhk->bthk", value, w(self.value_kernel)) + w(self.value_bias)
        return keys, values

    def attend(self, query, keys, values, attention_mask=None, query_start=0, training=None):
        """The attention of `query` over keys and values projected by `project_key_value`.

        Returns:
            (output (batch, query_length, query_width), weights (batch, heads,
            query_length, key_length)).
        """
        w = self._weight
        queries = ops.einsum("bqd,dhk->bqhk", query, w(self.query_kernel)) + w(self.query_bias)
        scores = ops.einsum("bqhk,bthk->bhqt", queries, keys)
        if self.max_distance:
            # The distance j - i of every (query i, key j), clipped, indexes a relative key.
            query_positions = ops.arange(ops.shape(query)[1], dtype="int32") + ops.cast(
                query_start, "int32")
            key_positions = ops.arange(ops.shape(keys)[1], dtype="int32")
            distance = ops.clip(key_positions[None, :] - query_positions[:, None],
                                -self.max_distance, self.max_distance) + self.max_distance
            relative = ops.take(w(self.relative_keys), distance, axis=0)  # (q, t, key_dim)
            scores = scores + ops.einsum("bqhk,qtk->bhqt", queries, relative)
        scores = scores / ops.sqrt(ops.cast(self.key_dim, scores.dtype))
        mask = None
        if attention_mask is not None:  # the same for every head
            mask = ops.expand_dims(ops.cast(attention_mask, "bool"), 1)
        weights = masked_softmax(scores, mask)
        read = ops.einsum("bhqt,bthk->bqhk", self.dropout(weights, training=training), values)
        output = ops.einsum("bqhk,hkd->bqd", read, w(self.output_kernel)) + w(self.output_bias)
        return output, weights

    def call(self, query, value, attention_mask=None, query_start=0, training=None,
             return_attention_scores=False):
        keys, values = self.project_key_value(value)
        output, weights = self.attend(query, keys, values, attention_mask=attention_mask,
                                      query_start=query_start, training=training)
        return (output, weights) if return_attention_scores else output

    def compute_output_spec(self, query, value, attention_mask=None, query_start=0, training=None,
                            return_attention_scores=False):
        output = keras.KerasTensor(query.shape, dtype=self.compute_dtype)
        if not return_attention_scores:
            return output
        return output, keras.KerasTensor(
            (query.shape[0], self.num_heads, query.shape[1], value.shape[1]),
            dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"num_heads": self.num_heads, "key_dim": self.key_dim,
                       "max_distance": self.max_distance, "dropout": self.dropout_rate})
        return config
