"""`GDecode`: equivariant output logits over the output vocabulary (Gordon et al. 2020, eq. 6)."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from compgen_tf.groups import Symmetry
from compgen_tf.layers.group_conv import (check_group_features, group_features_matmul,
                                          require_built)
from compgen_tf.layers.weight_arguments import set_weight_arguments, weight_arguments_config


@keras.saving.register_keras_serializable(package="compgen_tf")
class GDecode(keras.layers.Layer):
    """Logits of every output word from a function on the group.

    logits(w) = sum_h sum_k phi_k(h) psi_k(h^-1 w) + b(orbit of w): translating
    phi by g permutes the logits by g's action on the output vocabulary. The
    bias is one number per orbit of that action, so it cannot break
    equivariance (an untied per-word bias would: `jump` could then be
    preferred over `walk` whatever the input). Written in `keras.ops`.

    Args:
        symmetry: a `compgen_tf.groups.Symmetry`, its config dict, or a SCAN
            symmetry name.
        vocabulary: the output words, in id order.
        use_bias: add the per-orbit bias.
        kernel_initializer: Keras initializer of psi (|V'|, K).
        bias_initializer: Keras initializer of the per-orbit bias.
        kernel_regularizer, bias_regularizer: Keras regularizers (or None).
        kernel_constraint, bias_constraint: Keras constraints (or None).
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        features: (..., |G|, K) float tensor phi.
        prepared_kernel: optional, `prepare_kernel()` computed once per sequence
            (see `GroupConv`).

    Returns:
        (..., len(vocabulary)) logits.

    Example:
        >>> decode = GDecode("verb", ["<eos>", "I_JUMP", "I_LOOK", "I_RUN", "I_WALK"])
        >>> decode(np.zeros((2, 4, 16), "float32")).shape
        (2, 5)

    References:
        Gordon et al. (2020), Permutation equivariant models for compositional
        generalization in language, Sec. 4.2, eq. (6).
    """

    def __init__(self, symmetry, vocabulary, use_bias: bool = True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 bias_constraint=None, **kwargs):
        super().__init__(**kwargs)
        self.symmetry = Symmetry.from_config(symmetry)
        self.vocabulary = list(vocabulary)
        self.use_bias = bool(use_bias)
        set_weight_arguments(self, kernel_initializer=kernel_initializer,
                             bias_initializer=bias_initializer,
                             kernel_regularizer=kernel_regularizer,
                             bias_regularizer=bias_regularizer,
                             kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        # Acts on each position alone: a (batch, time) mask passes through unchanged.
        self.supports_masking = True
        action = self.symmetry.output_action
        moves = action.on_vocabulary(self.vocabulary)  # [h, w] = index of h w
        # [h, w] = index of h^-1 w.
        self._inverse_images = np.asarray(moves[self.symmetry.group.inverses], np.int32)
        self._orbits = np.asarray(action.orbits(self.vocabulary), np.int32)

    def build(self, input_shape):
        check_group_features(self, input_shape, self.symmetry.group.order)
        self.kernel = self.add_weight(name="kernel",
                                      shape=(len(self.vocabulary), int(input_shape[-1])),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.orbit_bias = (self.add_weight(name="orbit_bias",
                                           shape=(int(self._orbits.max()) + 1,),
                                           initializer=self.bias_initializer,
                                           regularizer=self.bias_regularizer,
                                           constraint=self.bias_constraint)
                           if self.use_bias else None)

    def prepare_kernel(self):
        """The (|G|·K, |V'|) matrix that `call` multiplies the flat features by."""
        require_built(self, "prepare_kernel")
        order, channels = self.symmetry.group.order, self.kernel.shape[1]
        # [h, w, k] = psi_k(h^-1 w) -> the matrix of one contraction.
        blocks = ops.take(self.kernel, self._inverse_images, axis=0)
        return ops.reshape(ops.transpose(blocks, (0, 2, 1)),
                           (order * channels, len(self.vocabulary)))

    def call(self, features, prepared_kernel=None):
        if prepared_kernel is None:
            prepared_kernel = self.prepare_kernel()
        logits = group_features_matmul(features, prepared_kernel)
        if self.use_bias:
            logits = logits + ops.take(self.orbit_bias, self._orbits, axis=0)
        return logits

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-2]) + (len(self.vocabulary),)

    def get_config(self):
        config = super().get_config()
        config.update({
            "symmetry": self.symmetry.get_config(),
            "vocabulary": self.vocabulary,
            "use_bias": self.use_bias,
            **weight_arguments_config(self),
        })
        return config
