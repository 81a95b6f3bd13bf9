"""`GDecode`: equivariant output logits over the output vocabulary (Gordon et al. 2020, eq. 6)."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from compgen_tf.groups import Symmetry
from compgen_tf.layers.group_conv import _require_built, group_features_matmul


@keras.saving.register_keras_serializable(package="compgen_tf")
class GDecode(keras.layers.Layer):
    """Logits of every output word from a function on the group.

    logits(w) = sum_h sum_k phi_k(h) psi_k(h^-1 w) + b(orbit of w): translating
    phi by g permutes the logits by g's action on the output vocabulary. The
    bias is one number per orbit of that action, so it cannot break
    equivariance (an untied per-word bias would: `jump` could then be
    preferred over `walk` whatever the input).

    Args:
        symmetry: a `compgen_tf.groups.Symmetry`, its config dict, or a SCAN
            symmetry name.
        vocabulary: the output words, in id order.
        use_bias: add the per-orbit bias.
        kernel_initializer: Keras initializer of psi (|V'|, K).
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        features: (..., |G|, K) float tensor phi.
        prepared_kernel: optional, `prepare_kernel()` computed once per sequence
            (see `GroupConv`).

    Returns:
        (..., len(vocabulary)) logits.

    Example:
        >>> decode = GDecode("verb", ["<eos>", "I_JUMP", "I_LOOK", "I_RUN", "I_WALK"])
        >>> decode(tf.zeros([2, 4, 16])).shape
        TensorShape([2, 5])

    References:
        Gordon et al. (2020), Permutation equivariant models for compositional
        generalization in language, Sec. 4.2, eq. (6).
    """

    def __init__(self, symmetry, vocabulary, use_bias: bool = True,
                 kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.symmetry = Symmetry.from_config(symmetry)
        self.vocabulary = list(vocabulary)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        action = self.symmetry.output_action
        moves = action.on_vocabulary(self.vocabulary)  # [h, w] = index of h w
        # [h, w] = index of h^-1 w.
        self._inverse_images = np.asarray(moves[self.symmetry.group.inverses], np.int32)
        self._orbits = np.asarray(action.orbits(self.vocabulary), np.int32)

    def build(self, input_shape):
        order = self.symmetry.group.order
        if len(input_shape) < 2 or input_shape[-2] != order or input_shape[-1] is None:
            raise ValueError(f"GDecode expects features of shape (..., {order}, K), got "
                             f"{tuple(input_shape)}")
        self.kernel = self.add_weight(name="kernel",
                                      shape=(len(self.vocabulary), int(input_shape[-1])),
                                      initializer=self.kernel_initializer)
        self.orbit_bias = (self.add_weight(name="orbit_bias",
                                           shape=(int(self._orbits.max()) + 1,),
                                           initializer="zeros")
                           if self.use_bias else None)

    def prepare_kernel(self):
        """The (|G|·K, |V'|) matrix that `call` multiplies the flat features by."""
        _require_built(self, "prepare_kernel")
        order, channels = self.symmetry.group.order, self.kernel.shape[1]
        # [h, w, k] = psi_k(h^-1 w) -> the matrix of one contraction.
        blocks = tf.gather(self.kernel, self._inverse_images)
        return tf.reshape(tf.transpose(blocks, [0, 2, 1]), [order * channels, -1])

    def call(self, features, prepared_kernel=None):
        if prepared_kernel is None:
            prepared_kernel = self.prepare_kernel()
        logits = group_features_matmul(features, prepared_kernel)
        if self.use_bias:
            logits += tf.gather(self.orbit_bias, self._orbits)
        return logits

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-2]) + (len(self.vocabulary),)

    def get_config(self):
        config = super().get_config()
        config.update({
            "symmetry": self.symmetry.get_config(),
            "vocabulary": self.vocabulary,
            "use_bias": self.use_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
        })
        return config
