"""`GLSTMCell`: the permutation-equivariant LSTM cell (Gordon et al. 2020, Appendix B)."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from compgen_tf.arguments import positive_int
from compgen_tf.groups import Symmetry
from compgen_tf.layers.group_conv import GroupConvolution, _require_built


@keras.saving.register_keras_serializable(package="compgen_tf")
class GLSTMCell(keras.layers.Layer):
    """An LSTM cell whose four gates are group convolutions of the input and the state.

    i, f, g, o = sigma/tanh(x * psi_.i + h * psi_.h + b_.), c' = f c + i g,
    h' = o tanh(c'), where * is `GroupConv`'s convolution and the biases are
    shared over the group: translating x, h and c by g translates h' and c'.
    `keras.layers.RNN` accepts only flat integer state sizes, so inputs, states
    and outputs are flat, (batch, |G|·channels), and reshaped inside.

    Args:
        symmetry: a `compgen_tf.groups.Symmetry`, its config dict, or a SCAN
            symmetry name.
        units: K, the channels of the hidden and cell states per group element.
        unit_forget_bias: start the forget-gate bias at 1.
        kernel_initializer, recurrent_initializer: Keras initializers.
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        inputs: (batch, |G|·K_in) flat features (reshape (batch, |G|, K_in) first).
        states: [h, c], each (batch, |G|·units).
        prepared_kernel: optional, `prepare_kernel()` computed once per sequence by a
            caller that runs the recurrence itself (`keras.layers.RNN` does not pass it,
            and the cell then prepares its filters at every step).

    Returns:
        (h', [h', c']).

    Example:
        >>> cell = GLSTMCell("verb", units=8)
        >>> rnn = keras.layers.RNN(cell, return_sequences=True)
        >>> rnn(tf.zeros([2, 5, 4 * 3])).shape  # (batch, time, |G| * units)
        TensorShape([2, 5, 32])

    References:
        Gordon et al. (2020), Permutation equivariant models for compositional
        generalization in language, Sec. 4.1 and Appendix B.
    """

    def __init__(self, symmetry, units: int, unit_forget_bias: bool = True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="glorot_uniform",
                 **kwargs):
        super().__init__(**kwargs)
        self.units = positive_int("units", units)
        self.symmetry = Symmetry.from_config(symmetry)
        self.unit_forget_bias = bool(unit_forget_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self._convolution = GroupConvolution(self.symmetry.group)
        size = self.symmetry.group.order * self.units
        self.state_size = [size, size]
        self.output_size = size

    @property
    def order(self) -> int:
        return self.symmetry.group.order

    def build(self, input_shape):
        features = input_shape[-1]
        if features is None or features % self.order:
            raise ValueError(f"GLSTMCell inputs must be flat (batch, |G| * K) features with "
                             f"|G| = {self.order}; got last dimension {features}")
        channels = features // self.order
        self.kernel = self.add_weight(name="kernel", shape=(self.order, channels, 4 * self.units),
                                      initializer=self.kernel_initializer)
        self.recurrent_kernel = self.add_weight(
            name="recurrent_kernel", shape=(self.order, self.units, 4 * self.units),
            initializer=self.recurrent_initializer)
        units = self.units
        bias = np.zeros(4 * units, np.float32)
        if self.unit_forget_bias:
            bias[units:2 * units] = 1.0
        self.bias = self.add_weight(name="bias", shape=(4 * units,),
                                    initializer=keras.initializers.Constant(bias))

    def prepare_kernel(self):
        """The input and recurrent filters, stacked along their input channels and prepared
        once (`GroupConvolution.prepare`): the four gates of [x; h] come from one
        convolution."""
        _require_built(self, "prepare_kernel")
        return self._convolution.prepare(tf.concat([self.kernel, self.recurrent_kernel], 1))

    def call(self, inputs, states, training=False, prepared_kernel=None):
        h, c = states
        batch = tf.shape(inputs)[0]
        if prepared_kernel is None:
            prepared_kernel = self.prepare_kernel()
        features = tf.concat([tf.reshape(inputs, [batch, self.order, -1]),
                              tf.reshape(h, [batch, self.order, self.units])], -1)
        z = self._convolution.apply(features, prepared_kernel) + self.bias
        i, f, g, o = tf.split(z, 4, axis=-1)
        c_previous = tf.reshape(c, [batch, self.order, self.units])
        c_next = tf.sigmoid(f) * c_previous + tf.sigmoid(i) * tf.tanh(g)
        h_next = tf.sigmoid(o) * tf.tanh(c_next)
        h_flat = tf.reshape(h_next, [batch, -1])
        return h_flat, [h_flat, tf.reshape(c_next, [batch, -1])]

    def get_initial_state(self, batch_size=None):
        zeros = tf.zeros([batch_size, self.order * self.units], self.compute_dtype)
        return [zeros, zeros]

    def get_config(self):
        config = super().get_config()
        config.update({
            "symmetry": self.symmetry.get_config(),
            "units": self.units,
            "unit_forget_bias": self.unit_forget_bias,
            "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            "recurrent_initializer": keras.initializers.serialize(self.recurrent_initializer),
        })
        return config

