"""`GroupConv`: the group convolution of Definition 4 (Gordon et al. 2020)."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from compgen_tf.groups import Symmetry


def group_conv_matrix(kernel, left_division_table):
    """The (|G|·K, |G|·K') matrix M with M[h·K + k, g·K' + i] = kernel[g^-1 h, k, i].

    One gather of the (|G|, K, K') filter by the table idx[g, h] = g^-1 h, then a
    transpose: `features (..., |G|·K) @ M` is the group convolution, with no
    (batch, |G|, |G|, K, K') temporary.
    """
    order, channels, filters = kernel.shape
    blocks = tf.gather(kernel, left_division_table)  # [g, h, k, i]
    blocks = tf.transpose(blocks, [1, 2, 0, 3])  # [h, k, g, i]
    return tf.reshape(blocks, [order * channels, order * filters])


def group_features_matmul(features, matrix):
    """features (..., |G|, K), flattened to (..., |G|·K), times matrix (|G|·K, N) -> (..., N)."""
    flat = tf.reshape(features, tf.concat([tf.shape(features)[:-2], [-1]], 0))
    return tf.matmul(flat, matrix) if flat.shape.rank == 2 else tf.tensordot(flat, matrix, 1)


def _require_built(layer, method: str):
    if not layer.built:
        raise ValueError(f"{layer.__class__.__name__}.{method}() needs the layer's weights: "
                         "call the layer once (or build() it) first")


def symmetry_config(symmetry) -> dict:
    return Symmetry.from_config(symmetry).get_config()


@keras.saving.register_keras_serializable(package="compgen_tf")
class GroupConv(keras.layers.Layer):
    """Group convolution of features that are functions on a finite group.

    out(g)_i = sum_h sum_k f_k(h) psi^i_k(g^-1 h) + b_i: equivariant to left
    translations of the group axis, T_g f(h) = f(g^-1 h). The bias is shared
    over the group, so it keeps equivariance.

    Args:
        symmetry: a `compgen_tf.groups.Symmetry` (only its group is used), its
            config dict, or a SCAN symmetry name (`"verb"`, `"direction"`,
            `"verb+direction"`, `"trivial"`).
        filters: output channels K'.
        use_bias: add a bias shared over the group elements.
        kernel_initializer, bias_initializer: Keras initializers.
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        features: (..., |G|, K) float tensor.
        matrix: optional, `convolution_matrix()` computed once: a recurrence that applies
            the layer at every time step passes it, so that the filter is gathered once
            per sequence rather than once per step.

    Returns:
        (..., |G|, filters).

    Example:
        >>> conv = GroupConv("verb", filters=8)
        >>> conv(tf.zeros([2, 4, 16])).shape
        TensorShape([2, 4, 8])

    References:
        Gordon et al. (2020), Permutation equivariant models for compositional
        generalization in language, Definition 4; Kondor & Trivedi (2018).
    """

    def __init__(self, symmetry, filters: int, use_bias: bool = True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        if isinstance(filters, bool) or int(filters) != filters or int(filters) < 1:
            raise ValueError(f"filters must be a positive integer, got {filters!r}")
        self.symmetry = Symmetry.from_config(symmetry)
        self.filters = int(filters)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self._division = np.asarray(self.symmetry.group.left_division_table, np.int32)

    @property
    def order(self) -> int:
        return self.symmetry.group.order

    def build(self, input_shape):
        if len(input_shape) < 2 or input_shape[-2] != self.order or input_shape[-1] is None:
            raise ValueError(f"GroupConv expects features of shape (..., {self.order}, K) for a "
                             f"group of order {self.order}, got {tuple(input_shape)}")
        channels = int(input_shape[-1])
        self.kernel = self.add_weight(name="kernel", shape=(self.order, channels, self.filters),
                                      initializer=self.kernel_initializer)
        self.bias = (self.add_weight(name="bias", shape=(self.filters,),
                                     initializer=self.bias_initializer)
                     if self.use_bias else None)

    def convolution_matrix(self):
        """The (|G|·K, |G|·filters) matrix that `call` multiplies the flat features by."""
        _require_built(self, "convolution_matrix")
        return group_conv_matrix(self.kernel, self._division)

    def call(self, features, matrix=None):
        if matrix is None:
            matrix = self.convolution_matrix()
        out = group_features_matmul(features, matrix)
        out = tf.reshape(out, tf.concat([tf.shape(features)[:-2], [self.order, -1]], 0))
        return out + self.bias if self.use_bias else out

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.filters,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "symmetry": self.symmetry.get_config(),
            "filters": self.filters,
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "bias_initializer": keras.initializers.serialize(self.bias_initializer),
        })
        return config
