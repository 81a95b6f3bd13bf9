"""`TransformerEncoderLayer`: self-attention and a feed-forward network, each with a residual."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import non_negative, positive_int, rate
from compgen_tf.layers.relative_attention import RelativeAttention


@keras.saving.register_keras_serializable(package="compgen_tf")
class TransformerEncoderLayer(keras.layers.Layer):
    """One encoder layer of the Transformer (post-norm, as in Vaswani et al. 2017).

    x ← LayerNorm(x + Dropout(SelfAttention(x))), then
    x ← LayerNorm(x + Dropout(W_2 relu(W_1 x))). The self-attention is `RelativeAttention`
    (with relative keys when `max_distance` > 0); padding positions are never read.

    Args:
        width: the model's width (d_model); a multiple of `num_heads`.
        num_heads: attention heads (each of width // num_heads).
        feedforward_dim: the feed-forward network's hidden width (d_ff).
        dropout: dropout rate on each residual branch.
        attention_dropout: dropout rate on the attention weights.
        max_distance: the relative keys' clip (0: none; then positions come from the
            inputs, added before the first layer).
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        inputs: float (batch, length, width).
        padding_mask: optional bool (batch, length), True at real positions.
        training: whether dropout is active.

    Returns:
        float (batch, length, width).

    Example:
        >>> layer = TransformerEncoderLayer(width=8, num_heads=2, feedforward_dim=16)
        >>> layer(np.zeros((2, 5, 8), "float32")).shape
        (2, 5, 8)

    References:
        Vaswani et al. (2017), Attention is all you need.
    """

    def __init__(self, width, num_heads, feedforward_dim, dropout=0.0, max_distance=0,
                 attention_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.width = positive_int("width", width)
        self.num_heads = positive_int("num_heads", num_heads)
        if self.width % self.num_heads:
            raise ValueError(f"width ({width}) must be a multiple of num_heads ({num_heads})")
        self.feedforward_dim = positive_int("feedforward_dim", feedforward_dim)
        self.dropout_rate = rate("dropout", dropout)
        self.attention_dropout = rate("attention_dropout", attention_dropout)
        self.max_distance = int(non_negative("max_distance", max_distance))
        # The sublayers take this layer's dtype policy: a sublayer of the global policy would
        # cast a mixed-precision layer's activations back to float32.
        policy = self.dtype_policy
        self.self_attention = RelativeAttention(self.num_heads, self.width // self.num_heads,
                                                max_distance=self.max_distance,
                                                dropout=self.attention_dropout,
                                                name="self_attention", dtype=policy)
        self.attention_norm = keras.layers.LayerNormalization(name="attention_norm",
                                                              dtype=policy)
        self.feedforward_in = keras.layers.Dense(self.feedforward_dim, activation="relu",
                                                 name="feedforward_in", dtype=policy)
        self.feedforward_out = keras.layers.Dense(self.width, name="feedforward_out",
                                                  dtype=policy)
        self.feedforward_norm = keras.layers.LayerNormalization(name="feedforward_norm",
                                                                dtype=policy)
        self.dropout = keras.layers.Dropout(self.dropout_rate, name="residual_dropout",
                                            dtype=policy)

    def build(self, inputs_shape, padding_mask_shape=None):
        shape = (None, None, self.width)
        self.self_attention.build(shape, shape)
        self.attention_norm.build(shape)
        self.feedforward_in.build(shape)
        self.feedforward_out.build((None, None, self.feedforward_dim))
        self.feedforward_norm.build(shape)
        self.built = True

    def feedforward(self, x, training=None):
        """The second residual block: x ← LayerNorm(x + Dropout(W_2 relu(W_1 x)))."""
        inner = self.feedforward_out(self.feedforward_in(x))
        return self.feedforward_norm(x + self.dropout(inner, training=training))

    def call(self, inputs, padding_mask=None, training=None):
        mask = None if padding_mask is None else ops.expand_dims(padding_mask, 1)
        attended = self.self_attention(inputs, inputs, attention_mask=mask, training=training)
        x = self.attention_norm(inputs + self.dropout(attended, training=training))
        return self.feedforward(x, training=training)

    def compute_output_spec(self, inputs, padding_mask=None, training=None):
        return keras.KerasTensor(inputs.shape, dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"width": self.width, "num_heads": self.num_heads,
                       "feedforward_dim": self.feedforward_dim, "dropout": self.dropout_rate,
                       "max_distance": self.max_distance,
                       "attention_dropout": self.attention_dropout})
        return config
