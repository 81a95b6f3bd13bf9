"""`bidirectional_lstm`: a bidirectional LSTM encoder at inference, its input products hoisted.

Keras' LSTM multiplies each step's input by the input kernel inside the recurrence, so a
single command reads that kernel once per word. At inference nothing in the input
projection depends on the recurrence: all steps are projected in one product, and the loop
keeps only the recurrent one. Single-command serving is bound by reading weights from
memory, and this halves what each encoder step reads (serving/README.md, "Latency").
Training, and the symbolic call that builds a functional backbone, keep the Keras layer,
except inside `unrolled_recurrences` (`compgen_tf.models.unrolling`), where a recurrence
whose length is known when traced is written out step by step, in training too.
"""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.models.unrolling import static_steps


def bidirectional_lstm(layer, inputs, mask=None, training=False):
    """What `layer(inputs, mask=mask, training=training)` returns, for a
    `keras.layers.Bidirectional` over a `keras.layers.LSTM` with `return_sequences=True`
    and `merge_mode="concat"` (with `return_state`, followed by the forward and backward
    (h, c)).

    On symbolic inputs, for any other layer, and in training (unless the steps are unrolled,
    see `compgen_tf.models.unrolling`, and the cells have no dropout) it calls the layer.
    Otherwise it runs the layer's two cells itself, with the same arithmetic up to float
    rounding: masked steps keep the state, and their outputs are zero
    (`zero_output_for_mask`) or repeat the last output, as Keras does.

    Args:
        layer: the `keras.layers.Bidirectional` layer (built).
        inputs: (batch, time, features).
        mask: optional bool (batch, time), True at real steps.
        training: Python bool.
    """
    steps = None if isinstance(inputs, keras.KerasTensor) else static_steps(inputs)
    if (isinstance(inputs, keras.KerasTensor) or not _hoistable(layer)
            or (training and (steps is None or _has_dropout(layer)))):
        return layer(inputs, mask=mask, training=training)
    if mask is None:
        mask = ops.ones(ops.shape(inputs)[:2], "bool")
    forward, *forward_state = _run(layer.forward_layer, inputs, mask, steps)
    backward, *backward_state = _run(layer.backward_layer, inputs, mask, steps)
    sequences = ops.concatenate([forward, backward], axis=-1)
    if layer.return_state:
        return [sequences, *forward_state, *backward_state]
    return sequences


def _hoistable(layer) -> bool:
    if not isinstance(layer, keras.layers.Bidirectional) or layer.merge_mode != "concat":
        return False
    return all(type(rnn) is keras.layers.LSTM and rnn.return_sequences and not rnn.stateful
               for rnn in (layer.forward_layer, layer.backward_layer))


def _has_dropout(layer) -> bool:
    return any(rnn.cell.dropout or rnn.cell.recurrent_dropout
               for rnn in (layer.forward_layer, layer.backward_layer))


def _run(lstm, inputs, mask, steps=None):
    """One direction: (outputs (batch, time, units) in input order, h, c); written out
    step by step when `steps` (the static length) is given."""
    cell = lstm.cell
    dtype = cell.compute_dtype
    kernel, recurrent_kernel = (ops.cast(w, dtype) for w in (cell.kernel, cell.recurrent_kernel))
    projected = ops.einsum("btd,dg->btg", ops.cast(inputs, dtype), kernel)
    if cell.use_bias:
        projected = projected + ops.cast(cell.bias, dtype)
    zeros = ops.zeros((ops.shape(inputs)[0], cell.units), dtype)

    def step(carry, step_inputs):
        h, c = carry
        z, real = step_inputs[:, :-1], step_inputs[:, -1:] > 0.5
        z = z + ops.matmul(h, recurrent_kernel)
        z_i, z_f, z_c, z_o = ops.split(z, 4, axis=-1)
        new_c = (cell.recurrent_activation(z_f) * c
                 + cell.recurrent_activation(z_i) * cell.activation(z_c))
        new_h = cell.recurrent_activation(z_o) * cell.activation(new_c)
        h, c = ops.where(real, new_h, h), ops.where(real, new_c, c)
        output = ops.where(real, new_h, ops.zeros_like(new_h)) if lstm.zero_output_for_mask else h
        # Keras' TensorFlow `scan` wants per-step outputs shaped as the carry: c rides along.
        return (h, c), (output, c)

    # The mask rides as one more column: Keras' TensorFlow `scan` fails on several inputs
    # whose time length is unknown when traced.
    per_step = ops.concatenate([projected, ops.expand_dims(ops.cast(mask, dtype), -1)],
                               axis=-1)
    if steps is not None:
        order = range(steps - 1, -1, -1) if lstm.go_backwards else range(steps)
        carry, outputs = (zeros, zeros), [None] * steps
        for t in order:
            carry, (outputs[t], _) = step(carry, per_step[:, t])
        return ops.stack(outputs, axis=1), carry[0], carry[1]
    # Time-major for the scan; `reverse` reads the steps from the last one and returns the
    # outputs in input order, which is how Bidirectional aligns the backward direction.
    (h, c), (outputs, _) = ops.scan(step, (zeros, zeros), ops.transpose(per_step, (1, 0, 2)),
                                    reverse=lstm.go_backwards)
    return ops.transpose(outputs, (1, 0, 2)), h, c
