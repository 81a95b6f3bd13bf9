"""`SyntaxShift`: the shift of Syntactic Attention's syntactic states (Russin et al. 2019)."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import positive_int
from compgen_tf.layers.weight_arguments import fresh_initializer
from compgen_tf.tokens import PAD_ID


@keras.saving.register_keras_serializable(package="compgen_tf")
class SyntaxShift(keras.layers.Layer):
    """Shifts a bidirectional LSTM's states so that no position sees its own word.

    h̃_j = [→h_{j-1}; ←h_{j+1}]; position 0 (`<sos>`) and the last non-padding position of
    each row (`<eos>`) hold two learned vectors instead, and padding positions are zero.

    Args:
        units: LSTM units per direction (the states have 2·units features).
        boundary_initializer: initializer of the two boundary vectors.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        states: (batch, length, 2·units), forward then backward features.
        source_ids: int (batch, length), `<pad>` after each row.

    Returns:
        The shifted states (batch, length, 2·units).

    Example:
        >>> shift = SyntaxShift(units=3)
        >>> shift(np.ones((1, 4, 6)), np.array([[2, 4, 3, 0]])).shape
        (1, 4, 6)

    References:
        Russin et al. (2019), Compositional generalization in a deep seq2seq model by
        separating syntax and semantics (the syntactic stream's encoder).
    """

    def __init__(self, units, boundary_initializer="uniform", **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True  # positions are kept: the padding mask still holds
        self.units = positive_int("units", units)
        self.boundary_initializer = keras.initializers.get(boundary_initializer)

    def build(self, states_shape, source_ids_shape):
        # Two independent draws (one shared instance would give both the same vector).
        self.sos_syntax = self.add_weight(shape=(2 * self.units,),
                                          initializer=fresh_initializer(self.boundary_initializer),
                                          name="sos_syntax")
        self.eos_syntax = self.add_weight(shape=(2 * self.units,),
                                          initializer=fresh_initializer(self.boundary_initializer),
                                          name="eos_syntax")

    def call(self, states, source_ids):
        mask = ops.not_equal(source_ids, PAD_ID)
        forward, backward = states[..., :self.units], states[..., self.units:]
        zeros = ops.zeros_like(forward[:, :1])
        shifted = ops.concatenate([ops.concatenate([zeros, forward[:, :-1]], axis=1),
                                   ops.concatenate([backward[:, 1:], zeros], axis=1)], axis=-1)
        lengths = ops.sum(ops.cast(mask, "int32"), axis=1, keepdims=True)
        positions = ops.expand_dims(ops.arange(ops.shape(source_ids)[1], dtype="int32"), 0)
        dtype = shifted.dtype
        shifted = ops.where(ops.expand_dims(ops.equal(positions, lengths - 1), -1),
                            ops.cast(self.eos_syntax, dtype), shifted)
        shifted = ops.where(ops.expand_dims(ops.equal(positions, 0), -1),
                            ops.cast(self.sos_syntax, dtype), shifted)
        return ops.where(ops.expand_dims(mask, -1), shifted, ops.zeros_like(shifted))

    def compute_output_shape(self, states_shape, source_ids_shape):
        return states_shape

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units, "boundary_initializer":
                       keras.initializers.serialize(self.boundary_initializer)})
        return config
