"""The Transformer's layers through `run_layer_test`, and the relative attention and the
sinusoidal encodings against a direct NumPy computation.

Backend-independent: `tests/test_backends.py` runs this file under JAX and PyTorch too.
"""

import math

import numpy as np
import pytest
from keras import ops

from compgen_tf.layers import (RelativeAttention, TokenAndPositionEmbedding,
                               TransformerDecoderLayer, TransformerEncoderLayer)
from layer_test_case import numpy, run_layer_test

# Each attention: query, key and value kernels and biases, output kernel and bias.
ATTENTION_WEIGHTS = 8
# Each layer: its attention(s), two LayerNorms (gamma, beta) around them, the feed-forward
# network's two Dense (kernel, bias).
ENCODER_WEIGHTS = ATTENTION_WEIGHTS + 2 * 2 + 2 * 2
DECODER_WEIGHTS = ENCODER_WEIGHTS + ATTENTION_WEIGHTS + 2


def features(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


@pytest.mark.parametrize("max_distance", [0, 2])
def test_relative_attention(tmp_path, max_distance):
    run_layer_test(RelativeAttention, dict(num_heads=2, key_dim=3, max_distance=max_distance),
                   [features(2, 4, 6), features(2, 5, 6, seed=1)], (2, 4, 6),
                   expected_num_trainable_weights=ATTENTION_WEIGHTS + bool(max_distance),
                   tmp_path=tmp_path)


def reference_attention(layer, query, value, mask, query_start):
    """Shaw et al. (2018), eq. 4-5, one (batch, head, query, key) at a time in NumPy."""
    w = {v.name: numpy(v) for v in layer.weights}
    heads, size, k = layer.num_heads, layer.key_dim, layer.max_distance
    q = np.einsum("bqd,dhk->bqhk", query, w["query_kernel"]) + w["query_bias"]
    keys = np.einsum("btd,dhk->bthk", value, w["key_kernel"]) + w["key_bias"]
    values = np.einsum("btd,dhk->bthk", value, w["value_kernel"]) + w["value_bias"]
    batch, queries, keys_count = query.shape[0], query.shape[1], value.shape[1]
    read = np.zeros((batch, queries, heads, size))
    for b in range(batch):
        for h in range(heads):
            for i in range(queries):
                scores = np.empty(keys_count)
                for j in range(keys_count):
                    distance = min(max(j - (i + query_start), -k), k)
                    relative = w["relative_keys"][distance + k]
                    scores[j] = q[b, i, h] @ (keys[b, j, h] + relative) / math.sqrt(size)
                scores = np.where(mask[b, i], scores, -np.inf)
                weights = np.exp(scores - scores.max())
                weights /= weights.sum()
                read[b, i, h] = weights @ values[b, :, h]
    return np.einsum("bqhk,hkd->bqd", read, w["output_kernel"]) + w["output_bias"]


def test_relative_attention_is_shaw_et_al_computed_directly():
    layer = RelativeAttention(num_heads=2, key_dim=3, max_distance=2)
    query, value = features(2, 3, 5), features(2, 6, 4, seed=1)
    layer(query, value)
    rng = np.random.default_rng(2)
    for weight in layer.weights:  # biases and relative keys away from their zeros/defaults
        weight.assign(rng.normal(size=weight.shape).astype("float32"))
    mask = rng.random((2, 3, 6)) < 0.7
    mask[:, :, 0] = True  # every query reads at least one key
    # Queries at positions 2, 3, 4 (a decoder's later steps): distances from -6 to 3, clipped.
    out = layer(query, value, attention_mask=mask, query_start=2)
    np.testing.assert_allclose(numpy(out), reference_attention(layer, query, value, mask, 2),
                               atol=1e-5, rtol=0)


def test_attention_over_projected_keys_is_the_call():
    layer = RelativeAttention(num_heads=2, key_dim=3, max_distance=1)
    query, value = features(2, 3, 4), features(2, 3, 4, seed=1)
    whole, weights = layer(query, value, return_attention_scores=True)
    keys, values = layer.project_key_value(value)
    again, same = layer.attend(query, keys, values)
    np.testing.assert_array_equal(numpy(again), numpy(whole))
    assert numpy(same).shape == (2, 2, 3, 3)
    np.testing.assert_allclose(numpy(same).sum(-1), 1.0, atol=1e-6)


@pytest.mark.parametrize("positions, weights", [("sinusoidal", 1), ("learned", 2),
                                                ("relative", 1)])
def test_token_and_position_embedding(tmp_path, positions, weights):
    ids = np.random.default_rng(0).integers(0, 9, size=(2, 5)).astype("int32")
    run_layer_test(TokenAndPositionEmbedding, dict(vocabulary_size=9, width=6,
                                                   positions=positions, max_positions=8),
                   ids, (2, 5, 6), expected_num_trainable_weights=weights, tmp_path=tmp_path)


def test_sinusoidal_positions_are_vaswani_et_al_and_start_where_told():
    layer = TokenAndPositionEmbedding(4, 6, positions="sinusoidal", scale=False)
    ids = np.zeros((1, 3), "int32")
    token = numpy(layer.token_embedding(ids))
    encoded = numpy(layer(ids, start=5)) - token
    expected = np.zeros((3, 6))
    for row, position in enumerate(range(5, 8)):
        for i in range(3):
            angle = position / 10000 ** (2 * i / 6)
            expected[row, 2 * i], expected[row, 2 * i + 1] = math.sin(angle), math.cos(angle)
    np.testing.assert_allclose(encoded[0], expected, atol=1e-5, rtol=0)
    scaled = TokenAndPositionEmbedding(4, 6, positions="relative")
    np.testing.assert_allclose(numpy(scaled(ids)), math.sqrt(6) * numpy(
        scaled.token_embedding(ids)), atol=1e-6)


@pytest.mark.parametrize("max_distance", [0, 2])
def test_transformer_encoder_layer(tmp_path, max_distance):
    run_layer_test(TransformerEncoderLayer, dict(width=6, num_heads=2, feedforward_dim=8,
                                                 max_distance=max_distance),
                   features(2, 4, 6), (2, 4, 6),
                   expected_num_trainable_weights=ENCODER_WEIGHTS + bool(max_distance),
                   tmp_path=tmp_path)


@pytest.mark.parametrize("max_distance", [0, 2])
def test_transformer_decoder_layer(tmp_path, max_distance):
    run_layer_test(TransformerDecoderLayer, dict(width=6, num_heads=2, feedforward_dim=8,
                                                 max_distance=max_distance),
                   [features(2, 3, 6), features(2, 5, 6, seed=1)], (2, 3, 6),
                   expected_num_trainable_weights=DECODER_WEIGHTS + bool(max_distance),
                   tmp_path=tmp_path)


def test_decoder_layer_steps_with_a_cache_give_its_teacher_forced_outputs():
    layer = TransformerDecoderLayer(width=6, num_heads=2, feedforward_dim=8, max_distance=2)
    x, memory = features(2, 4, 6), features(2, 5, 6, seed=1)
    memory_mask = np.array([[True] * 5, [True, True, True, False, False]])
    whole = numpy(layer(x, memory, memory_mask))
    shape = (2, 4, 2, 3)
    cache = (ops.zeros(shape), ops.zeros(shape))
    # `step` is a method, not a call: it takes tensors (Keras converts arrays only in calls).
    x, memory, memory_mask = map(ops.convert_to_tensor, (x, memory, memory_mask))
    memory_keys_values = layer.cross_attention.project_key_value(memory)
    for t in range(4):
        out, cache, _ = layer.step(x[:, t:t + 1], ops.convert_to_tensor(t, "int32"), cache,
                                   memory_keys_values, memory_mask)
        np.testing.assert_allclose(numpy(out)[:, 0], whole[:, t], atol=1e-5, rtol=0)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="multiple of num_heads"):
        TransformerEncoderLayer(width=6, num_heads=4, feedforward_dim=8)
    with pytest.raises(ValueError, match="positions must be one of"):
        TokenAndPositionEmbedding(4, 6, positions="rotary")
