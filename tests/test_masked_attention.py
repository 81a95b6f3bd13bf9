"""`compgen_tf.layers.masked_softmax`, the masked attention every attention layer and decoder uses.

Backend-independent (`keras.ops` and NumPy) apart from the gradient check.
"""

import keras
import numpy as np
import pytest
from keras import ops

from compgen_tf.layers import MASKED_SCORE, masked_softmax

numpy = ops.convert_to_numpy


def test_equal_scores_share_the_weight_exactly_and_masked_positions_get_zero():
    scores = np.array([[0.0, 7.0, 0.0, 0.0, 0.0], [1.5, 1.5, -3.0, 1.5, 1.5]], "float32")
    mask = np.array([[True, False, True, True, True], [True, True, False, True, True]])
    weights = numpy(masked_softmax(scores, mask))
    # Four real positions of equal score: exactly a quarter each, exactly zero elsewhere.
    np.testing.assert_array_equal(weights, [[0.25, 0.0, 0.25, 0.25, 0.25],
                                            [0.25, 0.25, 0.0, 0.25, 0.25]])


def test_values_are_the_softmax_of_the_real_positions():
    scores = np.array([[1.0, 2.0, 3.0, 40.0]], "float32")
    weights = numpy(masked_softmax(scores, np.array([[1, 1, 1, 0]])))  # 0/1 masks too
    real = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    np.testing.assert_allclose(weights[0, :3], real, rtol=1e-6)
    assert weights[0, 3] == 0.0


def test_is_the_where_then_softmax_it_replaced_bit_for_bit():
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(3, 4, 6)).astype("float32") * 5
    mask = rng.random((3, 1, 6)) < 0.6  # broadcast over the 4 query steps
    expected = ops.softmax(ops.where(mask, scores, ops.cast(-1e9, "float32")), axis=-1)
    np.testing.assert_array_equal(numpy(masked_softmax(scores, mask)), numpy(expected))
    np.testing.assert_array_equal(numpy(masked_softmax(scores)),
                                  numpy(ops.softmax(scores, axis=-1)))
    assert MASKED_SCORE == -1e9


def test_a_fully_masked_row_gets_uniform_weights():
    # Documented behaviour: all scores become MASKED_SCORE, so 1/n each (no NaN); callers
    # that want such a row to read nothing zero it themselves (KeyValueMemory does).
    weights = numpy(masked_softmax(np.array([[3.0, -1.0, 2.0, 0.5]], "float32"),
                                   np.zeros((1, 4), bool)))
    np.testing.assert_array_equal(weights, [[0.25, 0.25, 0.25, 0.25]])


def test_other_axis_and_dtype():
    scores = np.array([[1.0, 5.0], [1.0, 6.0], [1.0, 7.0], [9.0, 1.0]], "float32")
    mask = np.array([[True, True], [True, False], [True, True], [False, False]])
    weights = masked_softmax(ops.cast(scores, "bfloat16"), mask, axis=0)
    assert keras.backend.standardize_dtype(weights.dtype) == "bfloat16"
    weights = numpy(ops.cast(weights, "float32"))
    np.testing.assert_allclose(weights.sum(axis=0), [1.0, 1.0], rtol=1e-2)
    assert weights[3, 0] == 0.0 and weights[1, 1] == 0.0 and weights[3, 1] == 0.0


@pytest.mark.skipif(keras.backend.backend() != "tensorflow", reason="uses tf.GradientTape")
def test_masked_positions_get_no_gradient():
    import tensorflow as tf

    scores = tf.Variable([[0.3, -1.2, 2.0, 0.7]])
    with tf.GradientTape() as tape:
        weights = masked_softmax(scores, np.array([[True, False, True, False]]))
        loss = tf.reduce_sum(weights * [1.0, 2.0, 3.0, 4.0])
    gradient = tape.gradient(loss, scores).numpy()
    assert gradient[0, 1] == 0.0 and gradient[0, 3] == 0.0
    assert gradient[0, 0] != 0.0 and gradient[0, 2] != 0.0
