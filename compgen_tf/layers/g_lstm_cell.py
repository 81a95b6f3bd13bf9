"""`GLSTMCell`: the permutation-equivariant LSTM cell (Gordon et al. 2020, Appendix B)."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from compgen_tf.arguments import positive_int
from compgen_tf.groups import Symmetry
# Keras' RNN layer draws a cell's dropout masks once per sequence only for subclasses of this
# mixin (keras.layers.RNN checks isinstance); it is not exported under keras.layers.
from compgen_tf.keras_internals import DropoutRNNCell
from compgen_tf.layers.group_conv import GroupConvolution, require_built
from compgen_tf.layers.weight_arguments import (dropout_arguments_config, set_dropout_arguments,
                                                set_weight_arguments, weight_arguments_config)


@keras.saving.register_keras_serializable(package="compgen_tf")
class GLSTMCell(keras.layers.Layer, DropoutRNNCell):
    """An LSTM cell whose four gates are group convolutions of the input and the state.

    i, f, g, o = sigma/tanh(x * psi_.i + h * psi_.h + b_.), c' = f c + i g,
    h' = o tanh(c'), where * is `GroupConv`'s convolution and the biases are
    shared over the group: translating x, h and c by g translates h' and c'.
    `keras.layers.RNN` accepts only flat integer state sizes, so inputs, states
    and outputs are flat, (batch, |G|·channels), and reshaped inside. Written in
    `keras.ops`: it runs on the TensorFlow, JAX and PyTorch backends.

    Dropout keeps equivariance: a mask drops a channel at every group element at
    once ((batch, 1, K) broadcast over the group axis), so a translated input meets
    the same mask, translated. An independent mask per (g, k) entry would not be
    equivariant for a given draw. As in Keras' `LSTMCell`, `keras.layers.RNN` draws
    the masks once per sequence; a caller that runs the recurrence itself keeps the
    first masks until it calls `reset_dropout_mask()` and
    `reset_recurrent_dropout_mask()` (once per batch).

    Args:
        symmetry: a `compgen_tf.groups.Symmetry`, its config dict, or a SCAN
            symmetry name.
        units: K, the channels of the hidden and cell states per group element.
        unit_forget_bias: start the forget-gate bias at 1.
        kernel_initializer, recurrent_initializer, bias_initializer: Keras
            initializers (`bias_initializer` before the forget-gate 1 is added).
        kernel_regularizer, recurrent_regularizer, bias_regularizer: Keras
            regularizers (or None).
        kernel_constraint, recurrent_constraint, bias_constraint: Keras constraints
            (or None).
        dropout: fraction of the input channels dropped, in [0, 1).
        recurrent_dropout: fraction of the hidden-state channels dropped, in [0, 1).
        seed: seed of the dropout masks.
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        inputs: (batch, |G|·K_in) flat features (reshape (batch, |G|, K_in) first).
        states: [h, c], each (batch, |G|·units).
        training: whether dropout is applied.
        prepared_kernel: optional, `prepare_kernel()` computed once per sequence by a
            caller that runs the recurrence itself (`keras.layers.RNN` does not pass it,
            and the cell then prepares its filters at every step).

    Returns:
        (h', [h', c']).

    Example:
        >>> cell = GLSTMCell("verb", units=8)
        >>> rnn = keras.layers.RNN(cell, return_sequences=True)
        >>> rnn(np.zeros((2, 5, 4 * 3), "float32")).shape  # (batch, time, |G| * units)
        (2, 5, 32)

    References:
        Gordon et al. (2020), Permutation equivariant models for compositional
        generalization in language, Sec. 4.1 and Appendix B.
    """

    def __init__(self, symmetry, units: int, unit_forget_bias: bool = True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout: float = 0.0, recurrent_dropout: float = 0.0,
                 seed=None, **kwargs):
        super().__init__(**kwargs)
        self.units = positive_int("units", units)
        self.symmetry = Symmetry.from_config(symmetry)
        self.unit_forget_bias = bool(unit_forget_bias)
        set_weight_arguments(
            self, kernel_initializer=kernel_initializer,
            recurrent_initializer=recurrent_initializer, bias_initializer=bias_initializer,
            kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint)
        set_dropout_arguments(self, dropout, recurrent_dropout, seed)
        self._convolution = GroupConvolution(self.symmetry.group)
        size = self.symmetry.group.order * self.units
        self.state_size = [size, size]
        self.output_size = size

    @property
    def order(self) -> int:
        """|G|, the order of the symmetry's group: the features come in |G| blocks."""
        return self.symmetry.group.order

    def build(self, input_shape):
        features = input_shape[-1]
        if features is None or features % self.order:
            raise ValueError(f"GLSTMCell inputs must be flat (batch, |G| * K) features with "
                             f"|G| = {self.order}; got last dimension {features}")
        channels = features // self.order
        units = self.units
        self.kernel = self.add_weight(name="kernel", shape=(self.order, channels, 4 * units),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=(self.order, units, 4 * units),
            initializer=self.recurrent_initializer, regularizer=self.recurrent_regularizer,
            constraint=self.recurrent_constraint)
        initializer = self.bias_initializer
        if self.unit_forget_bias:
            base = self.bias_initializer
            forget_one = np.zeros(4 * units, np.float32)
            forget_one[units:2 * units] = 1.0

            def initializer(shape, dtype=None):
                return ops.add(base(shape, dtype=dtype), ops.cast(forget_one, dtype))
        self.bias = self.add_weight(name="bias", shape=(4 * units,), initializer=initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint)

    def prepare_kernel(self):
        """The input and recurrent filters, stacked along their input channels and prepared
        once (`GroupConvolution.prepare`): the four gates of [x; h] come from one
        convolution."""
        require_built(self, "prepare_kernel")
        return self._convolution.prepare(ops.concatenate([self.kernel, self.recurrent_kernel], 1))

    def _create_dropout_mask(self, step_input, dropout_rate):
        # One draw per channel, shared by every group element (see the class docstring).
        size = step_input.shape[-1]
        if size is None:  # a graph that does not know it: the size at run time
            size = ops.shape(step_input)[-1]
        channels = size // self.order
        batch = ops.shape(step_input)[0]
        ones = ops.ones((batch, 1, channels), dtype=step_input.dtype)
        mask = keras.random.dropout(ones, rate=dropout_rate, seed=self.seed_generator)
        return ops.reshape(ops.repeat(mask, self.order, axis=1), (-1, size))

    def call(self, inputs, states, training=False, prepared_kernel=None):
        h, c = states
        if training and self.dropout:
            inputs = inputs * self.get_dropout_mask(inputs)
        if training and self.recurrent_dropout:
            h = h * self.get_recurrent_dropout_mask(h)
        if prepared_kernel is None:
            prepared_kernel = self.prepare_kernel()
        features = ops.concatenate([
            # The channels come from the kernel: a graph may not know the input's last size.
            ops.reshape(inputs, (-1, self.order, self.kernel.shape[1])),
            ops.reshape(h, (-1, self.order, self.units))], -1)
        z = self._convolution.apply(features, prepared_kernel) + self.bias
        i, f, g, o = ops.split(z, 4, axis=-1)
        c_previous = ops.reshape(c, (-1, self.order, self.units))
        c_next = ops.sigmoid(f) * c_previous + ops.sigmoid(i) * ops.tanh(g)
        h_next = ops.sigmoid(o) * ops.tanh(c_next)
        size = self.order * self.units
        h_flat = ops.reshape(h_next, (-1, size))
        return h_flat, [h_flat, ops.reshape(c_next, (-1, size))]

    def get_initial_state(self, batch_size=None):
        """Zero states `[h, c]`, each (batch_size, |G| * units), for `keras.layers.RNN`."""
        zeros = ops.zeros((batch_size, self.order * self.units), dtype=self.compute_dtype)
        return [zeros, zeros]

    def get_config(self):
        config = super().get_config()
        config.update({
            "symmetry": self.symmetry.get_config(),
            "units": self.units,
            "unit_forget_bias": self.unit_forget_bias,
            **dropout_arguments_config(self),
            **weight_arguments_config(self),
        })
        return config
