"""`StackLSTMCell`: an LSTM whose forget gate is a convolution over a memory stack."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import positive_int
# Keras' RNN layer draws a cell's dropout masks once per sequence only for subclasses of this
# mixin (keras.layers.RNN checks isinstance); it is not exported under keras.layers.
from compgen_tf.keras_internals import DropoutRNNCell
from compgen_tf.layers.weight_arguments import (dropout_arguments_config, set_dropout_arguments,
                                                set_weight_arguments, weight_arguments_config)


def shift_stacks(stacks, filters):
    """Width-3 convolution of each stack with its own filter, zero-padded at both ends.

    new[..., d] = f0 * old[..., d - 1] + f1 * old[..., d] + f2 * old[..., d + 1]: the
    filter [1, 0, 0] pushes (every value moves one slot up, away from the bottom, slot 0
    becomes 0 and the top value falls off), [0, 0, 1] pops (one slot down, the bottom
    value is dropped), [0, 1, 0] keeps the stack.

    Args:
        stacks: (..., depth) values, slot 0 at the bottom.
        filters: (..., 3) filter per stack.
    """
    zero = ops.zeros_like(stacks[..., :1])
    below = ops.concatenate([zero, stacks[..., :-1]], -1)
    above = ops.concatenate([stacks[..., 1:], zero], -1)
    return (filters[..., 0:1] * below + filters[..., 1:2] * stacks
            + filters[..., 2:3] * above)


@keras.saving.register_keras_serializable(package="compgen_tf")
class StackLSTMCell(keras.layers.Layer, DropoutRNNCell):
    """LSTM cell with a stack of memory cells per unit and a convolutional forget gate.

    With g = [h; x]: per unit n a softmax filter f_n = softmax(W_f,n g + b_f,n) of
    width 3 is convolved over that unit's stack of `depth` cells (replacing the
    forget gate: it can push, pop or keep); the input gate writes
    sigma(W_i g + b_i) * tanh(W_c g + b_c) to the bottom cell only, and the new
    hidden state reads the bottom cell only: h' = sigma(W_o g + b_o) * tanh(c_0).
    The same filter shape acts at every depth (translation symmetry along the
    stack), which makes the cell a differentiable pushdown automaton. Dropout acts
    on the input and on h, never on the stack, so it leaves that symmetry alone.
    Written in `keras.ops`: it runs on the TensorFlow, JAX and PyTorch backends.

    Args:
        units: N, the number of stacks and of hidden units (paper: 10).
        depth: D, the cells per stack (paper: 20).
        kernel_initializer, bias_initializer: Keras initializers of the gate weights.
        kernel_regularizer, bias_regularizer: Keras regularizers (or None).
        kernel_constraint, bias_constraint: Keras constraints (or None).
        dropout: fraction of the input units dropped, in [0, 1).
        recurrent_dropout: fraction of the hidden units dropped, in [0, 1).
        seed: seed of the dropout masks.
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        inputs: (batch, M) embedded input token.
        states: [h (batch, units), stacks (batch, units * depth)], flat because
            `keras.layers.RNN` accepts only flat state sizes.
        training: whether dropout is applied.

    Returns:
        (h', [h', stacks']).

    Example:
        >>> rnn = keras.layers.RNN(StackLSTMCell(units=10, depth=20), return_sequences=True)
        >>> rnn(np.zeros((2, 7, 10), "float32")).shape
        (2, 7, 10)

    References:
        "Symmetry and systematicity" (anonymous, under review), Sec. 4 and
        Appendix C, eqs. (6)-(12).
    """

    def __init__(self, units: int, depth: int = 20, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, dropout: float = 0.0,
                 recurrent_dropout: float = 0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.units, self.depth = positive_int("units", units), positive_int("depth", depth)
        if self.depth < 2:
            raise ValueError(f"a stack needs depth >= 2 to push and pop, got {depth}")
        set_weight_arguments(self, kernel_initializer=kernel_initializer,
                             bias_initializer=bias_initializer,
                             kernel_regularizer=kernel_regularizer,
                             bias_regularizer=bias_regularizer,
                             kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        set_dropout_arguments(self, dropout, recurrent_dropout, seed)
        self.state_size = [self.units, self.units * self.depth]
        self.output_size = self.units

    def build(self, input_shape):
        if input_shape[-1] is None:
            raise ValueError("StackLSTMCell needs a known input size")
        context = int(input_shape[-1]) + self.units
        n = self.units
        # Columns: 3n filter logits, then the input gate, candidate and output gate (n each).
        self.kernel = self.add_weight(name="kernel", shape=(context, 6 * n),
                                      initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint)
        self.bias = self.add_weight(name="bias", shape=(6 * n,),
                                    initializer=self.bias_initializer,
                                    regularizer=self.bias_regularizer,
                                    constraint=self.bias_constraint)

    def stack_filters(self, inputs, h):
        """The softmax filters (batch, units, 3) = (push, keep, pop) weights of eq. (7)
        for input `inputs` (batch, M) and hidden state `h` (batch, units)."""
        return self._gates(inputs, h)[0]

    def _gates(self, inputs, h):
        n = self.units
        z = ops.matmul(ops.concatenate([h, inputs], -1), self.kernel) + self.bias
        filter_logits, input_gate, candidate, output_gate = (
            z[..., :3 * n], z[..., 3 * n:4 * n], z[..., 4 * n:5 * n], z[..., 5 * n:])
        filters = ops.softmax(ops.reshape(filter_logits, (-1, n, 3)), axis=-1)
        return filters, input_gate, candidate, output_gate

    def call(self, inputs, states, training=False):
        h, stacks = states
        n = self.units
        if training and self.dropout:
            inputs = inputs * self.get_dropout_mask(inputs)
        if training and self.recurrent_dropout:
            h = h * self.get_recurrent_dropout_mask(h)
        filters, input_gate, candidate, output_gate = self._gates(inputs, h)
        stacks = shift_stacks(ops.reshape(stacks, (-1, n, self.depth)), filters)
        written = ops.sigmoid(input_gate) * ops.tanh(candidate)
        stacks = ops.concatenate([stacks[..., :1] + written[..., None], stacks[..., 1:]], -1)
        h_next = ops.sigmoid(output_gate) * ops.tanh(stacks[..., 0])
        return h_next, [h_next, ops.reshape(stacks, (-1, n * self.depth))]

    def get_initial_state(self, batch_size=None):
        """Zero states `[h, stacks]`: h (batch_size, units), the stacks flattened to
        (batch_size, units * depth); for `keras.layers.RNN`."""
        return [ops.zeros((batch_size, self.units), dtype=self.compute_dtype),
                ops.zeros((batch_size, self.units * self.depth), dtype=self.compute_dtype)]

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units, "depth": self.depth,
                       **dropout_arguments_config(self), **weight_arguments_config(self)})
        return config
