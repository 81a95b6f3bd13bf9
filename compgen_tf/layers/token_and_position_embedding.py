"""`TokenAndPositionEmbedding`: token embeddings with absolute positions added, or none."""

from __future__ import annotations

import math

import keras
import numpy as np
from keras import ops

from compgen_tf.arguments import positive_int

# How positions enter a Transformer: added to the embeddings ("sinusoidal", "learned"), or
# read by the attention ("relative": the embeddings carry no position).
POSITIONS = ("sinusoidal", "learned", "relative")


def sinusoidal_encoding(positions, width, dtype):
    """The sinusoidal encodings (Vaswani et al. 2017, Sec. 3.5) of int `positions` (length,):
    float (length, width), sin(p / 10000^(2i/width)) at feature 2i, cos at feature 2i + 1."""
    frequencies = np.exp(-math.log(10000.0) * np.arange(0, width, 2) / width).astype("float32")
    # The angles in float32 whatever the compute dtype: bfloat16 would round them.
    angles = ops.expand_dims(ops.cast(positions, "float32"), -1) * frequencies
    encoding = ops.reshape(ops.stack([ops.sin(angles), ops.cos(angles)], axis=-1),
                           (-1, 2 * len(frequencies)))
    return ops.cast(encoding[:, :width], dtype)


@keras.saving.register_keras_serializable(package="compgen_tf")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """Token embeddings, optionally scaled by sqrt(width), plus absolute position encodings.

    `positions` chooses the encodings: "sinusoidal" (fixed, Vaswani et al. 2017), "learned"
    (a table of `max_positions` learned vectors) or "relative" (none: a relative attention,
    `RelativeAttention` with `max_distance` > 0, reads the positions instead).

    Args:
        vocabulary_size: number of tokens.
        width: size of the embeddings.
        positions: one of "sinusoidal", "learned", "relative".
        max_positions: the learned table's size (with "learned"; positions must be below it).
        scale: multiply the token embeddings by sqrt(width) (Vaswani et al. 2017, Sec. 3.4).
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        ids: int (batch, length).
        start: the position of the first id (an int or scalar int tensor; default 0), for
            a decoder that embeds one position at a time.

    Returns:
        float (batch, length, width).

    Example:
        >>> layer = TokenAndPositionEmbedding(10, 8, positions="sinusoidal")
        >>> layer(np.ones((2, 5), "int32")).shape
        (2, 5, 8)

    References:
        Vaswani et al. (2017), Attention is all you need.
    """

    def __init__(self, vocabulary_size, width, positions="sinusoidal", max_positions=128,
                 scale=True, **kwargs):
        super().__init__(**kwargs)
        if positions not in POSITIONS:
            raise ValueError(f"positions must be one of {list(POSITIONS)}, got {positions!r}")
        self.vocabulary_size = positive_int("vocabulary_size", vocabulary_size)
        self.width = positive_int("width", width)
        self.positions = positions
        self.max_positions = positive_int("max_positions", max_positions)
        self.scale = bool(scale)
        # Of this layer's dtype policy (mixed precision reaches the sublayers).
        self.token_embedding = keras.layers.Embedding(self.vocabulary_size, self.width,
                                                      name="token_embedding",
                                                      dtype=self.dtype_policy)
        self.position_embedding = (
            keras.layers.Embedding(self.max_positions, self.width, name="position_embedding",
                                   dtype=self.dtype_policy)
            if positions == "learned" else None)

    def build(self, ids_shape):
        self.token_embedding.build((None, None))
        if self.position_embedding is not None:
            self.position_embedding.build((None,))
        self.built = True

    def call(self, ids, start=0):
        embedded = self.token_embedding(ids)
        if self.scale:
            embedded = embedded * ops.cast(math.sqrt(self.width), embedded.dtype)
        if self.positions == "relative":
            return embedded
        at = ops.arange(ops.shape(ids)[1], dtype="int32") + ops.cast(start, "int32")
        if self.positions == "learned":
            encoding = self.position_embedding(at)
        else:
            encoding = sinusoidal_encoding(at, self.width, embedded.dtype)
        return embedded + ops.expand_dims(ops.cast(encoding, embedded.dtype), 0)

    def compute_output_spec(self, ids, start=0):
        return keras.KerasTensor((*ids.shape, self.width), dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"vocabulary_size": self.vocabulary_size, "width": self.width,
                       "positions": self.positions, "max_positions": self.max_positions,
                       "scale": self.scale})
        return config
