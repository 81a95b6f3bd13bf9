import keras
import numpy as np
import pytest
from keras import ops

from compgen_tf.layers import StackLSTMCell
from compgen_tf.layers.stack_lstm_cell import shift_stacks

numpy = ops.convert_to_numpy
STACK = np.array([[1.0, 2.0, 3.0, 0.0, 0.0]], np.float32)  # slot 0 = bottom


@pytest.mark.parametrize("kernel, expected", [
    ([1, 0, 0], [0, 1, 2, 3, 0]),  # push: everything one slot up
    ([0, 0, 1], [2, 3, 0, 0, 0]),  # pop: one slot down, the bottom value is dropped
    ([0, 1, 0], [1, 2, 3, 0, 0]),  # keep
])
def test_filters_push_pop_and_keep_exactly(kernel, expected):
    shifted = shift_stacks(ops.convert_to_tensor(STACK),
                           ops.convert_to_tensor(np.array([kernel], np.float32)))
    np.testing.assert_array_equal(numpy(shifted), [expected])


def test_top_value_falls_off_a_full_stack():
    full = ops.convert_to_tensor(np.array([[1.0, 2.0, 3.0]], np.float32))
    push = ops.convert_to_tensor(np.array([[1.0, 0, 0]], np.float32))
    np.testing.assert_array_equal(numpy(shift_stacks(full, push)),
                                  [[0.0, 1.0, 2.0]])


def saturated_cell(filter_logits, write=0.0):
    """A 1-unit cell whose gates ignore the input: a fixed filter and a fixed write."""
    cell = StackLSTMCell(units=1, depth=5)
    cell.build((None, 2))
    kernel = np.zeros(cell.kernel.shape, np.float32)
    # bias columns: 3 filter logits, input gate, candidate, output gate.
    bias = np.array(list(filter_logits) + [200.0 if write else -200.0, np.arctanh(write)
                                           if write else 0.0, 200.0], np.float32)
    cell.set_weights([kernel, bias])
    return cell


def test_cell_pushes_and_pops_its_stack_and_reads_the_bottom():
    inputs = np.zeros((1, 2), np.float32)
    h = np.zeros((1, 1), np.float32)
    stacks = STACK
    push = saturated_cell([200.0, -200.0, -200.0], write=0.5)
    out, (h, stacks) = push(inputs, [h, stacks])
    np.testing.assert_allclose(numpy(stacks), [[0.5, 1, 2, 3, 0]], atol=1e-6)
    np.testing.assert_allclose(numpy(out), [[np.tanh(0.5)]], atol=1e-6)
    pop = saturated_cell([-200.0, -200.0, 200.0])
    out, (h, stacks) = pop(inputs, [h, stacks])
    np.testing.assert_allclose(numpy(stacks), [[1, 2, 3, 0, 0]], atol=1e-6)
    np.testing.assert_allclose(numpy(out), [[np.tanh(1.0)]], atol=1e-6)


def test_works_inside_keras_rnn_and_round_trips(tmp_path):
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(None, 4))
    outputs = keras.layers.RNN(StackLSTMCell(units=3, depth=6), return_sequences=True)(inputs)
    model = keras.Model(inputs, outputs)
    batch = np.random.default_rng(0).normal(size=(2, 7, 4)).astype(np.float32)
    before = numpy(model(batch))
    assert before.shape == (2, 7, 3)
    model.save(tmp_path / "stack.keras")
    loaded = keras.saving.load_model(tmp_path / "stack.keras")
    np.testing.assert_allclose(numpy(loaded(batch)), before, atol=1e-6)
    cell = loaded.layers[1].cell
    assert (cell.units, cell.depth, cell.state_size) == (3, 6, [3, 18])


@pytest.mark.parametrize("kwargs, message", [
    ({"units": 0}, "units must be a positive integer"),
    ({"units": 2, "depth": 1}, "depth >= 2"),
    ({"units": 2, "depth": 2.5}, "depth must be a positive integer"),
])
def test_constructor_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        StackLSTMCell(**kwargs)
