"""Every equivariant layer, checked with `check_equivariance` under random weights.

Backend-independent (`keras.ops` and NumPy only). On JAX and PyTorch, `tests/test_backends.py`
checks that the same layers give TensorFlow's outputs on the same weights, to 1e-5, which
carries these checks over."""

import keras
import numpy as np
import pytest
from keras import ops

from compgen_tf.groups import (Group, Symmetry, check_equivariance, ids_transform,
                               regular_transform, scores_transform)
from compgen_tf.layers import GAttention, GDecode, GEmbed, GLSTMCell, GroupConv
from compgen_tf.layers.group_conv import GroupConvolution

TOLERANCE = 1e-5
SOURCE = ["<pad>", "<unk>", "<sos>", "<eos>", "and", "jump", "left", "look", "right", "run",
          "twice", "walk"]
TARGET = ["<pad>", "<unk>", "<sos>", "<eos>", "I_JUMP", "I_LOOK", "I_RUN", "I_TURN_LEFT",
          "I_TURN_RIGHT", "I_WALK"]
SYMMETRIES = ["verb", "direction", "verb+direction"]
numpy = ops.convert_to_numpy


def random_features(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def random_ids(shape, vocabulary_size, seed=0):
    return np.random.default_rng(seed).integers(0, vocabulary_size, size=shape)


def round_trip(layer, inputs):
    """A layer rebuilt from its config, with the same weights, gives the same outputs."""
    clone = layer.__class__.from_config(layer.get_config())
    clone(inputs) if not isinstance(inputs, tuple) else clone(*inputs)
    clone.set_weights(layer.get_weights())
    return clone


@pytest.mark.parametrize("name", SYMMETRIES)
def test_g_embed_is_equivariant(name):
    symmetry = Symmetry.for_scan(name)
    keras.utils.set_random_seed(0)
    embed = GEmbed(symmetry, SOURCE, output_dim=6)
    ids = random_ids((3, 7), len(SOURCE))
    error = check_equivariance(embed, symmetry.group, ids,
                               ids_transform(symmetry.input_action.on_vocabulary(SOURCE)),
                               regular_transform(symmetry.group, axis=-2))
    assert error == 0.0
    out = numpy(embed(ids))
    assert out.shape == (3, 7, symmetry.group.order, 6)
    # Row g of a word's embedding is the plain embedding of g^-1 w.
    table = numpy(embed.embeddings)
    jump = SOURCE.index("jump")
    for g in symmetry.group.elements:
        word = symmetry.input_action.act(symmetry.group.inverse(g), "jump")
        np.testing.assert_array_equal(numpy(embed(np.array([jump])))[0, g],
                                      table[SOURCE.index(word)])
    # Words no element moves embed identically on every row.
    twice = numpy(embed(np.array([SOURCE.index("twice")])))[0]
    assert np.all(twice == twice[0])


def test_g_embed_output_side_and_errors():
    symmetry = Symmetry.for_scan("verb")
    embed = GEmbed(symmetry, TARGET, output_dim=3, side="output")
    error = check_equivariance(embed, symmetry.group, random_ids((2, 5), len(TARGET)),
                               ids_transform(symmetry.output_action.on_vocabulary(TARGET)),
                               regular_transform(symmetry.group))
    assert error == 0.0
    with pytest.raises(ValueError, match="side must be one of"):
        GEmbed(symmetry, TARGET, 3, side="both")
    with pytest.raises(ValueError, match="not in the vocabulary"):
        GEmbed(symmetry, ["walk", "run"], 3)
    with pytest.raises(ValueError, match="output_dim must be a positive integer"):
        GEmbed(symmetry, SOURCE, 0)


@pytest.mark.parametrize("name", SYMMETRIES)
def test_group_conv_is_equivariant_and_matches_definition_4(name):
    symmetry = Symmetry.for_scan(name)
    group = symmetry.group
    keras.utils.set_random_seed(1)
    conv = GroupConv(symmetry, filters=5, bias_initializer="random_normal")
    features = random_features(2, 3, group.order, 4)
    translate = regular_transform(group, axis=-2)
    assert check_equivariance(conv, group, features, translate, translate) < TOLERANCE
    # Against the definition, term by term.
    kernel, bias = numpy(conv.kernel), numpy(conv.bias)
    expected = np.zeros((2, 3, group.order, 5), np.float64)
    for g in group.elements:
        for h in group.elements:
            expected[..., g, :] += features[..., h, :] @ kernel[group.compose(group.inverse(g),
                                                                                h)]
    np.testing.assert_allclose(numpy(conv(features)), expected + bias, atol=1e-5)
    np.testing.assert_allclose(numpy(round_trip(conv, features)(features)),
                               numpy(conv(features)))


@pytest.mark.parametrize("group", [Group.cyclic(3), Group.cyclic(5),
                                   Group.from_generators([[1, 2, 0], [1, 0, 2]])[0]],
                         ids=["Z3", "Z5", "S3"])
def test_group_convolution_matches_definition_4_in_either_basis(group):
    """Abelian groups convolve in their real Fourier basis, others with the dense matrix:
    both are Definition 4, out(g) = sum_h f(h) psi(g^-1 h)."""
    convolution = GroupConvolution(group)
    assert convolution.fourier == group.is_abelian
    kernel = random_features(group.order, 3, 2, seed=4)
    features = random_features(5, group.order, 3, seed=5)
    out = convolution.apply(ops.convert_to_tensor(features),
                            convolution.prepare(ops.convert_to_tensor(kernel)))
    expected = np.zeros((5, group.order, 2))
    for g in group.elements:
        for h in group.elements:
            expected[:, g] += features[:, h] @ kernel[group.compose(group.inverse(g), h)]
    np.testing.assert_allclose(numpy(out), expected, atol=1e-5)


def test_group_conv_rejects_wrong_group_axis():
    conv = GroupConv("verb", filters=2)
    with pytest.raises(ValueError, match=r"\(\.\.\., 4, K\)"):
        conv(np.zeros((2, 3, 5), np.float32))
    with pytest.raises(ValueError, match="filters must be a positive integer"):
        GroupConv("verb", filters=0)


@pytest.mark.parametrize("name", SYMMETRIES)
def test_g_lstm_cell_in_keras_rnn_is_equivariant(name):
    symmetry = Symmetry.for_scan(name)
    group = symmetry.group
    keras.utils.set_random_seed(2)
    cell = GLSTMCell(symmetry, units=3)
    rnn = keras.layers.RNN(cell, return_sequences=True, return_state=True)
    channels = 4
    inputs = random_features(2, 6, group.order, channels)

    def run(x):
        outputs, h, c = rnn(ops.reshape(x, (2, 6, -1)))
        return ops.stack([ops.reshape(t, (2, group.order, 3))
                         for t in (outputs[:, -1], h, c)], axis=1)  # (batch, 3, |G|, units)

    translate = regular_transform(group, axis=-2)
    assert check_equivariance(run, group, inputs, translate, translate) < TOLERANCE
    assert cell.state_size == [group.order * 3] * 2 and cell.output_size == group.order * 3
    clone = GLSTMCell.from_config(cell.get_config())
    rnn_clone = keras.layers.RNN(clone, return_sequences=True, return_state=True)
    rnn_clone(inputs.reshape(2, 6, -1))
    clone.set_weights(cell.get_weights())
    np.testing.assert_allclose(numpy(rnn_clone(inputs.reshape(2, 6, -1))[0]),
                               numpy(rnn(inputs.reshape(2, 6, -1))[0]), atol=1e-6)


def test_g_lstm_cell_rejects_inputs_not_divisible_by_the_group():
    rnn = keras.layers.RNN(GLSTMCell("verb", units=2))
    with pytest.raises(ValueError, match=r"\|G\| = 4"):
        rnn(np.zeros((1, 3, 6), np.float32))


@pytest.mark.parametrize("name", SYMMETRIES)
def test_g_attention_is_equivariant_with_invariant_weights(name):
    group = Symmetry.for_scan(name).group
    query = random_features(2, group.order, 5, seed=3)
    keys = random_features(2, 4, group.order, 5, seed=4)
    mask = np.array([[True, True, True, False], [True, True, False, False]])
    attention = GAttention()

    def context(inputs):
        return attention(inputs[0], inputs[1], mask)[0]

    def weights(inputs):
        return attention(inputs[0], inputs[1], mask)[1]

    move_both = lambda g, qk: (group.translate(g, qk[0], -2),  # noqa: E731
                               group.translate(g, qk[1], -2))
    assert check_equivariance(context, group, (query, keys), move_both,
                              regular_transform(group, -2)) < TOLERANCE
    assert check_equivariance(weights, group, (query, keys), move_both,
                              lambda g, w: w) < TOLERANCE
    w = numpy(weights((query, keys)))
    assert np.all(w[~mask] < 1e-6)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-6)


@pytest.mark.parametrize("name", SYMMETRIES)
def test_g_decode_is_equivariant_and_its_bias_is_tied_on_orbits(name):
    symmetry = Symmetry.for_scan(name)
    group = symmetry.group
    keras.utils.set_random_seed(5)
    decode = GDecode(symmetry, TARGET)
    features = random_features(3, group.order, 6, seed=6)
    decode(features)
    decode.orbit_bias.assign(np.arange(decode.orbit_bias.shape[0], dtype=np.float32))
    permutations = symmetry.output_action.on_vocabulary(TARGET)
    error = check_equivariance(decode, group, features, regular_transform(group, -2),
                               scores_transform(permutations))
    assert error < TOLERANCE
    np.testing.assert_allclose(numpy(round_trip(decode, features)(features)),
                               numpy(decode(features)))
    # The check would catch an untied per-word bias (the reference implementation's).
    word_bias = np.random.default_rng(7).normal(size=len(TARGET)).astype(np.float32)
    broken = check_equivariance(lambda x: ops.add(decode(x), word_bias), group, features,
                                regular_transform(group, -2), scores_transform(permutations))
    if group.order > 1:
        assert broken > 1e-2


def test_layers_save_and_load_in_a_keras_model(tmp_path):
    symmetry = Symmetry.for_scan("verb")
    ids = keras.Input(shape=(None,), dtype="int32")
    embedded = GEmbed(symmetry, SOURCE, 4)(ids)
    convolved = GroupConv(symmetry, 4)(embedded)
    flat = keras.layers.Reshape((-1, symmetry.group.order * 4))(convolved)
    states = keras.layers.RNN(GLSTMCell(symmetry, 4))(flat)
    logits = GDecode(symmetry, TARGET)(keras.layers.Reshape((symmetry.group.order, 4))(states))
    model = keras.Model(ids, logits)
    batch = random_ids((2, 5), len(SOURCE), seed=8)
    before = numpy(model(batch))
    model.save(tmp_path / "g.keras")
    loaded = keras.saving.load_model(tmp_path / "g.keras")
    np.testing.assert_allclose(numpy(loaded(batch)), before, atol=1e-6)
    # The whole stack is equivariant: commands in, action scores out.
    error = check_equivariance(model, symmetry.group, batch,
                               ids_transform(symmetry.input_action.on_vocabulary(SOURCE)),
                               scores_transform(symmetry.output_action.on_vocabulary(TARGET)))
    assert error < TOLERANCE


def test_a_prepared_kernel_gives_exactly_the_layers_own_result():
    """Recurrences prepare each filter once per sequence and pass it to every step."""
    symmetry = Symmetry.for_scan("verb")
    keras.utils.set_random_seed(3)
    features = random_features(5, 4, 6)
    conv = GroupConv(symmetry, filters=3)
    with pytest.raises(ValueError, match=r"call the layer once"):
        conv.prepare_kernel()
    own = conv(features)
    np.testing.assert_array_equal(numpy(conv(features, conv.prepare_kernel())), numpy(own))

    decode = GDecode(symmetry, TARGET)
    own = decode(features)
    np.testing.assert_array_equal(numpy(decode(features, decode.prepare_kernel())),
                                  numpy(own))

    cell = GLSTMCell(symmetry, units=2)
    flat = features.reshape(5, 24)
    states = [random_features(5, 8, seed=1), random_features(5, 8, seed=2)]
    own_output, own_states = cell(flat, states)
    output, new_states = cell(flat, states, prepared_kernel=cell.prepare_kernel())
    np.testing.assert_array_equal(numpy(output), numpy(own_output))
    for state, own_state in zip(new_states, own_states):
        np.testing.assert_array_equal(numpy(state), numpy(own_state))
