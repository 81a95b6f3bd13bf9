"""`StackLSTMCell`: an LSTM whose forget gate is a convolution over a memory stack."""

from __future__ import annotations

import keras
import tensorflow as tf

from compgen_tf.arguments import positive_int


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
    below = tf.pad(stacks[..., :-1], [[0, 0]] * (stacks.shape.rank - 1) + [[1, 0]])
    above = tf.pad(stacks[..., 1:], [[0, 0]] * (stacks.shape.rank - 1) + [[0, 1]])
    return (filters[..., 0:1] * below + filters[..., 1:2] * stacks
            + filters[..., 2:3] * above)


@keras.saving.register_keras_serializable(package="compgen_tf")
class StackLSTMCell(keras.layers.Layer):
    """LSTM cell with a stack of memory cells per unit and a convolutional forget gate.

    With g = [h; x]: per unit n a softmax filter f_n = softmax(W_f,n g + b_f,n) of
    width 3 is convolved over that unit's stack of `depth` cells (replacing the
    forget gate: it can push, pop or keep); the input gate writes
    sigma(W_i g + b_i) * tanh(W_c g + b_c) to the bottom cell only, and the new
    hidden state reads the bottom cell only: h' = sigma(W_o g + b_o) * tanh(c_0).
    The same filter shape acts at every depth (translation symmetry along the
    stack), which makes the cell a differentiable pushdown automaton.

    Args:
        units: N, the number of stacks and of hidden units (paper: 10).
        depth: D, the cells per stack (paper: 20).
        kernel_initializer: Keras initializer of the gate weights.
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        inputs: (batch, M) embedded input token.
        states: [h (batch, units), stacks (batch, units * depth)], flat because
            `keras.layers.RNN` accepts only flat state sizes.

    Returns:
        (h', [h', stacks']).

    Example:
        >>> rnn = keras.layers.RNN(StackLSTMCell(units=10, depth=20), return_sequences=True)
        >>> rnn(tf.zeros([2, 7, 10])).shape
        TensorShape([2, 7, 10])

    References:
        "Symmetry and systematicity" (anonymous, under review), Sec. 4 and
        Appendix C, eqs. (6)-(12).
    """

    def __init__(self, units: int, depth: int = 20, kernel_initializer="glorot_uniform",
                 **kwargs):
        super().__init__(**kwargs)
        self.units, self.depth = positive_int("units", units), positive_int("depth", depth)
        if self.depth < 2:
            raise ValueError(f"a stack needs depth >= 2 to push and pop, got {depth}")
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.state_size = [self.units, self.units * self.depth]
        self.output_size = self.units

    def build(self, input_shape):
        if input_shape[-1] is None:
            raise ValueError("StackLSTMCell needs a known input size")
        context = int(input_shape[-1]) + self.units
        n = self.units
        # Columns: 3n filter logits, then the input gate, candidate and output gate (n each).
        self.kernel = self.add_weight(name="kernel", shape=(context, 6 * n),
                                      initializer=self.kernel_initializer)
        self.bias = self.add_weight(name="bias", shape=(6 * n,), initializer="zeros")

    def stack_filters(self, inputs, h):
        """The softmax filters (batch, units, 3) = (push, keep, pop) weights of eq. (7)
        for input `inputs` (batch, M) and hidden state `h` (batch, units)."""
        return self._gates(inputs, h)[0]

    def _gates(self, inputs, h):
        n = self.units
        z = tf.matmul(tf.concat([h, inputs], -1), self.kernel) + self.bias
        filter_logits, input_gate, candidate, output_gate = tf.split(z, [3 * n, n, n, n], -1)
        filters = tf.nn.softmax(tf.reshape(filter_logits, [-1, n, 3]), axis=-1)
        return filters, input_gate, candidate, output_gate

    def call(self, inputs, states, training=False):
        h, stacks = states
        n = self.units
        filters, input_gate, candidate, output_gate = self._gates(inputs, h)
        stacks = shift_stacks(tf.reshape(stacks, [-1, n, self.depth]), filters)
        written = tf.sigmoid(input_gate) * tf.tanh(candidate)
        stacks = tf.concat([stacks[..., :1] + written[..., None], stacks[..., 1:]], -1)
        h_next = tf.sigmoid(output_gate) * tf.tanh(stacks[..., 0])
        return h_next, [h_next, tf.reshape(stacks, [-1, n * self.depth])]

    def get_initial_state(self, batch_size=None):
        return [tf.zeros([batch_size, self.units], self.compute_dtype),
                tf.zeros([batch_size, self.units * self.depth], self.compute_dtype)]

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units, "depth": self.depth,
                       "kernel_initializer": keras.initializers.serialize(
                           self.kernel_initializer)})
        return config
