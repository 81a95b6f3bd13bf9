"""`compgen_tf.decoding.GreedySampler`: loops of `segment` steps with a growing state."""

import numpy as np
import pytest
from keras import ops

from compgen_tf.decoding import GreedySampler
from compgen_tf.tokens import EOS_ID, PAD_ID


def counting_step(previous, state):
    """Emits token 5 + (number of steps so far), <eos> at step 6 (row 0) or never (row 1);
    the state is one slot per step, as a key/value cache is, each step filling its own."""
    step, slots = state
    filled = ops.where(ops.expand_dims(ops.arange(ops.shape(slots)[1]) == step, 0), 1, slots)
    token = 5 + ops.sum(filled, axis=1)
    token = ops.where(ops.logical_and(ops.arange(2) == 0, step == 6), EOS_ID, token)
    return ops.one_hot(token, 20), (step + 1, filled), None


@pytest.mark.parametrize("segment", [1, 3, 4, 9])
def test_loops_of_segment_steps_with_a_growing_state_give_the_one_loop_outputs(segment):
    grown = []

    def grow(state, steps):
        grown.append(steps)
        step, slots = state
        return step, ops.pad(slots, ((0, 0), (0, steps - slots.shape[1])))

    sampler = GreedySampler()
    whole, _ = sampler(counting_step, (ops.convert_to_tensor(0), ops.zeros((2, 9), "int32")),
                       batch_size=2, max_length=9, return_attention=False)
    first = min(segment, 9)
    ids, _ = sampler(counting_step, (ops.convert_to_tensor(0), ops.zeros((2, first), "int32")),
                     batch_size=2, max_length=9, return_attention=False,
                     segment=segment, grow_fn=grow)
    expected = [[6, 7, 8, 9, 10, 11, EOS_ID, PAD_ID, PAD_ID], list(range(6, 15))]
    np.testing.assert_array_equal(ops.convert_to_numpy(whole), expected)
    np.testing.assert_array_equal(ops.convert_to_numpy(ids), expected)
    assert grown == list(range(2 * segment, 9, segment)) + ([9] if segment < 9 else [])


def test_a_segment_needs_a_positive_length_and_a_grow_function():
    with pytest.raises(ValueError, match="segment must be a positive number of steps with a "
                                         "grow_fn, got segment=3, grow_fn=None"):
        GreedySampler()(counting_step, (), batch_size=2, max_length=9, segment=3)
