import keras
import numpy as np
import pytest
from keras import ops

from compgen_tf.layers import KeyValueMemory


numpy = ops.convert_to_numpy


def reference(queries, keys, values):
    scores = queries @ keys.T / np.sqrt(keys.shape[-1])
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return weights @ values, weights


def test_matches_scaled_dot_product_attention():
    rng = np.random.default_rng(0)
    queries, keys, values = (rng.normal(size=s).astype(np.float32)
                             for s in ((2, 4, 6), (2, 3, 6), (2, 3, 5)))
    read, weights = KeyValueMemory()(queries, keys, values)
    for b in range(2):
        expected_read, expected_weights = reference(queries[b], keys[b], values[b])
        np.testing.assert_allclose(numpy(weights[b]), expected_weights, atol=1e-6)
        np.testing.assert_allclose(numpy(read[b]), expected_read, atol=1e-5)


def test_masks_padded_slots_and_padded_queries():
    rng = np.random.default_rng(1)
    queries, keys, values = (rng.normal(size=s).astype(np.float32)
                             for s in ((2, 4, 6), (2, 3, 6), (2, 3, 5)))
    memory_mask = np.array([[True, True, False], [False, False, False]])
    query_mask = np.array([[True, True, True, False], [True, True, True, True]])
    read, weights = KeyValueMemory()(queries, keys, values, query_mask, memory_mask)
    read, weights = numpy(read), numpy(weights)
    # Example 0: only the first two slots count, exactly as a memory holding just them.
    expected_read, expected_weights = reference(queries[0, :3], keys[0, :2], values[0, :2])
    np.testing.assert_allclose(weights[0, :3, :2], expected_weights, atol=1e-6)
    assert np.all(weights[0, :, 2] == 0)
    np.testing.assert_allclose(read[0, :3], expected_read, atol=1e-5)
    assert np.all(read[0, 3] == 0) and np.all(weights[0, 3] == 0)  # padded query step
    assert np.all(weights[1] == 0) and np.all(read[1] == 0)  # empty memory reads nothing
    # Changing what is stored in a padded slot changes nothing.
    keys2, values2 = keys.copy(), values.copy()
    keys2[0, 2] += 100.0
    values2[0, 2] -= 100.0
    read2, _ = KeyValueMemory()(queries, keys2, values2, query_mask, memory_mask)
    np.testing.assert_array_equal(numpy(read2), read)


def test_usable_in_a_keras_model_and_round_trips(tmp_path):
    q, k, v = (keras.Input(shape=(None, 4)) for _ in range(3))
    read, weights = KeyValueMemory(name="memory")(q, k, v)
    model = keras.Model([q, k, v], [read, weights])
    rng = np.random.default_rng(2)
    batch = [rng.normal(size=(1, 3, 4)).astype(np.float32) for _ in range(3)]
    model.save(tmp_path / "memory.keras")
    loaded = keras.saving.load_model(tmp_path / "memory.keras")
    for a, b in zip(model(batch), loaded(batch)):
        np.testing.assert_allclose(numpy(a), numpy(b))


def test_mismatched_key_size_is_a_clear_error():
    with pytest.raises(ValueError, match="same size m"):
        KeyValueMemory()(np.ones((1, 2, 4)), np.ones((1, 3, 5)), np.ones((1, 3, 5)))
