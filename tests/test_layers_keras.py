"""Every public layer through `run_layer_test`, plus the Keras arguments each one takes.

Backend-independent: `tests/test_backends.py` runs this file under JAX and PyTorch too.
"""

import sys

import keras
import numpy as np
import pytest
from keras import ops

from compgen_tf.groups import Symmetry, check_equivariance, regular_transform
from compgen_tf.layers import (GAttention, GDecode, GEmbed, GLSTMCell, GroupConv,
                               KeyValueMemory, StackLSTMCell, SyntaxShift, TiedRowsEmbedding,
                               WeightedAutomaton, WordNoise)
from layer_test_case import numpy, run_layer_test

SOURCE = ["<pad>", "<unk>", "<sos>", "<eos>", "jump", "look", "run", "walk", "twice"]
TARGET = ["<pad>", "<unk>", "<sos>", "<eos>", "I_JUMP", "I_LOOK", "I_RUN", "I_WALK"]
ON_TENSORFLOW = keras.backend.backend() == "tensorflow"


def features(*shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def rnn(**kwargs):
    """`wrap` for a cell: a sequence-returning `keras.layers.RNN` of the cell's own dtype policy."""
    return lambda cell: keras.layers.RNN(cell, return_sequences=True, dtype=cell.dtype_policy,
                                         **kwargs)


def test_importing_the_layers_needs_no_tensorflow_on_another_backend():
    if ON_TENSORFLOW:
        pytest.skip("the TensorFlow backend imports TensorFlow")
    assert "tensorflow" not in sys.modules


def test_g_embed(tmp_path):
    ids = np.random.default_rng(0).integers(0, len(SOURCE), size=(2, 5)).astype("int32")
    run_layer_test(GEmbed, dict(symmetry="verb", vocabulary=SOURCE, output_dim=8), ids,
                   (2, 5, 4, 8), expected_num_trainable_weights=1, tmp_path=tmp_path)


def test_group_conv(tmp_path):
    run_layer_test(GroupConv, dict(symmetry="verb+direction", filters=5), features(2, 3, 8, 6),
                   (2, 3, 8, 5), expected_num_trainable_weights=2, tmp_path=tmp_path)


def test_g_decode(tmp_path):
    run_layer_test(GDecode, dict(symmetry="verb", vocabulary=TARGET), features(2, 4, 6),
                   (2, len(TARGET)), expected_num_trainable_weights=2, tmp_path=tmp_path)


@pytest.mark.parametrize("jit_compile", [False, True] if ON_TENSORFLOW else [False])
def test_g_lstm_cell_in_keras_rnn_trains_with_fit(tmp_path, jit_compile):
    """`fit` used to fail with "enters the loop with shape (None, 12), but has shape
    (None, None) after one iteration": the cell's reshapes lost the static state size."""
    run_layer_test(GLSTMCell, dict(symmetry="verb", units=8), features(2, 5, 4 * 3),
                   (2, 5, 4 * 8), expected_num_trainable_weights=3, wrap=rnn(),
                   tmp_path=tmp_path, jit_compile=jit_compile)


def test_g_lstm_cell_with_dropout(tmp_path):
    run_layer_test(GLSTMCell, dict(symmetry="verb", units=4, dropout=0.3, recurrent_dropout=0.3,
                                   seed=1),
                   features(2, 5, 4 * 3), (2, 5, 4 * 4), expected_num_trainable_weights=3,
                   expected_num_non_trainable_variables=1, wrap=rnn(), tmp_path=tmp_path)


def test_stack_lstm_cell(tmp_path):
    run_layer_test(StackLSTMCell, dict(units=3, depth=6), features(2, 7, 4), (2, 7, 3),
                   expected_num_trainable_weights=2, wrap=rnn(), tmp_path=tmp_path)
    run_layer_test(StackLSTMCell, dict(units=3, depth=6, dropout=0.2, recurrent_dropout=0.2,
                                       seed=2),
                   features(2, 7, 4), (2, 7, 3), expected_num_trainable_weights=2,
                   expected_num_non_trainable_variables=1, wrap=rnn(), run_precision_check=False)


def test_g_attention(tmp_path):
    mask = np.array([[True, True, False], [True, False, False]])
    run_layer_test(GAttention, {}, [features(2, 4, 5), features(2, 3, 4, 5, seed=1), mask],
                   [(2, 4, 5), (2, 3)], expected_num_trainable_weights=0, tmp_path=tmp_path)


def test_key_value_memory(tmp_path):
    run_layer_test(KeyValueMemory, {}, [features(2, 4, 6), features(2, 3, 6, seed=1),
                                        features(2, 3, 5, seed=2)],
                   [(2, 4, 5), (2, 4, 3)], expected_num_trainable_weights=0, tmp_path=tmp_path)


# Syntactic Attention's layers: `<sos>` = 2, `<eos>` = 3, `<pad>` = 0, words from 4 on.
SOURCE_IDS = np.array([[2, 4, 5, 3, 0], [2, 6, 3, 0, 0]], "int32")


def test_syntax_shift(tmp_path):
    states = features(2, 5, 6)
    run_layer_test(SyntaxShift, dict(units=3), [states, SOURCE_IDS], (2, 5, 6),
                   expected_num_trainable_weights=2, tmp_path=tmp_path)
    layer = SyntaxShift(3)
    shifted = numpy(layer(states, SOURCE_IDS))
    sos, eos = numpy(layer.sos_syntax), numpy(layer.eos_syntax)
    # A word reads its left neighbour's forward and its right neighbour's backward features.
    np.testing.assert_array_equal(shifted[0, 1], np.concatenate([states[0, 0, :3],
                                                                 states[0, 2, 3:]]))
    np.testing.assert_array_equal(shifted[0, 0], sos)
    np.testing.assert_array_equal(shifted[0, 3], eos)
    np.testing.assert_array_equal(shifted[1, 2], eos)
    assert np.all(shifted[0, 4] == 0) and np.all(shifted[1, 3:] == 0)
    with pytest.raises(ValueError, match="units"):
        SyntaxShift(0)


def test_word_noise(tmp_path):
    embedded = features(2, 5, 4)
    run_layer_test(WordNoise, dict(rate=0.5, seed=1), [embedded, SOURCE_IDS], (2, 5, 4),
                   expected_num_trainable_weights=0, expected_num_non_trainable_variables=1,
                   tmp_path=tmp_path)
    layer = WordNoise(rate=1.0, seed=1)
    np.testing.assert_array_equal(numpy(layer(embedded, SOURCE_IDS)), embedded)
    noisy = numpy(layer(embedded, SOURCE_IDS, training=True))
    is_word = SOURCE_IDS >= 4
    # At rate 1 every word is replaced and nothing else is.
    np.testing.assert_array_equal(noisy[~is_word], embedded[~is_word])
    assert not np.any(noisy[is_word] == embedded[is_word])
    for bad, message in [(dict(rate=1.5), r"rate must be a probability in \[0, 1\], got 1.5"),
                         (dict(rate=True), "rate must be"),
                         (dict(rate=0.1, stddev=0), "stddev must be a positive number, got 0")]:
        with pytest.raises(ValueError, match=message):
            WordNoise(**bad)


def test_tied_rows_embedding(tmp_path):
    ids = np.array([[4, 5, 6, 0], [6, 6, 5, 4]], dtype="int32")
    run_layer_test(TiedRowsEmbedding, dict(input_dim=8, output_dim=3, tied_ids=[6],
                                           lender_ids=[4, 5]), ids, (2, 4, 3),
                   expected_num_trainable_weights=1, tmp_path=tmp_path)


@pytest.mark.parametrize("go_backwards", [True, False])
def test_weighted_automaton(tmp_path, go_backwards):
    ids = np.array([[4, 5, 6, 0], [7, 0, 0, 0], [8, 4, 4, 5]], "int32")
    run_layer_test(WeightedAutomaton, dict(vocabulary_size=9, state_size=3,
                                           go_backwards=go_backwards),
                   ids, (3,), expected_num_trainable_weights=4, tmp_path=tmp_path)


@pytest.mark.parametrize("layer, inputs, arguments", [
    (lambda **k: GEmbed("verb", SOURCE, 4, **k), np.array([[4, 5]]), ["embeddings"]),
    (lambda **k: GroupConv("verb", 3, **k), features(2, 4, 5), ["kernel", "bias"]),
    (lambda **k: GDecode("verb", TARGET, **k), features(2, 4, 5), ["kernel", "bias"]),
    (lambda **k: keras.layers.RNN(GLSTMCell("verb", 2, **k)), features(2, 3, 8),
     ["kernel", "recurrent", "bias"]),
    (lambda **k: keras.layers.RNN(StackLSTMCell(2, 3, **k)), features(2, 3, 4),
     ["kernel", "bias"]),
    (lambda **k: WeightedAutomaton(6, 2, **k), np.array([[4, 5, 0]]), ["delta", "offset"]),
])
def test_regularizers_and_constraints_reach_every_weight(layer, inputs, arguments):
    regularized = layer(**{f"{a}_regularizer": keras.regularizers.L2(1e-2) for a in arguments})
    regularized(inputs)
    assert len(regularized.losses) == len(arguments)
    # One penalty per weight (zero for a zero-initialised bias, positive for the rest).
    assert float(numpy(regularized.losses[0])) > 0
    constrained = layer(**{f"{a}_constraint": keras.constraints.NonNeg() for a in arguments})
    constrained(inputs)
    with_constraint = [w for w in constrained.weights if w.constraint is not None]
    assert len(with_constraint) == len(arguments)


@pytest.mark.filterwarnings("ignore:Layer .reshape.")
def test_g_embed_mask_zero_masks_padding_for_the_rnn_after_it():
    embed = GEmbed("verb", SOURCE, 2, mask_zero=True)
    ids = np.array([[4, 5, 0, 0], [6, 0, 0, 0]])
    np.testing.assert_array_equal(numpy(embed.compute_mask(ids)), ids != 0)
    inputs = keras.Input(shape=(None,), dtype="int32")
    embedded = embed(inputs)
    flat = keras.layers.Reshape((-1, 4 * 2))(embedded)
    states = keras.layers.RNN(GLSTMCell("verb", 2), return_sequences=True)(
        flat, mask=embed.compute_mask(inputs))
    model = keras.Model(inputs, states)
    # Position-wise layers pass the mask on (a layer without masking support drops it).
    for layer in (GroupConv("verb", 2), GDecode("verb", TARGET)):
        assert getattr(layer(embedded), "_keras_mask", None) is not None
    assert getattr(keras.layers.Reshape((-1, 8))(embedded), "_keras_mask", None) is None
    out = numpy(model(ids))
    # Masked steps repeat the last real step's output.
    np.testing.assert_array_equal(out[0, 2], out[0, 1])
    np.testing.assert_array_equal(out[1, 3], out[1, 0])
    with pytest.raises(ValueError, match="mask_zero=True needs id 0 to be padding"):
        GEmbed("verb", ["jump", "look", "run", "walk"], 2, mask_zero=True)


@pytest.mark.parametrize("cell_class, kwargs", [(GLSTMCell, {"symmetry": "verb", "units": 2}),
                                                (StackLSTMCell, {"units": 2})])
def test_cells_validate_dropout(cell_class, kwargs):
    with pytest.raises(ValueError, match=r"recurrent_dropout must be in \[0, 1\)"):
        cell_class(**kwargs, recurrent_dropout=1.0)
    with pytest.raises(ValueError, match=r"dropout must be in \[0, 1\)"):
        cell_class(**kwargs, dropout=-0.1)


def test_g_lstm_cell_dropout_keeps_equivariance():
    """A dropout mask is drawn per channel and shared by every group element, so a training
    step with dropout is still exactly equivariant (for the same draw)."""
    symmetry = Symmetry.for_scan("verb+direction")
    group = symmetry.group
    keras.utils.set_random_seed(4)
    cell = GLSTMCell(symmetry, units=3, dropout=0.5, recurrent_dropout=0.5, seed=3)
    x = features(4, group.order, 2)
    h, c = features(4, group.order, 3, seed=1), features(4, group.order, 3, seed=2)

    def step(inputs):
        x, h, c = (ops.reshape(t, (4, -1)) for t in inputs)
        output, (h_next, c_next) = cell(x, [h, c], training=True)
        return ops.reshape(ops.stack([h_next, c_next], 1), (4, 2, group.order, 3))

    step((x, h, c))  # draws the masks, which the cell keeps until they are reset
    masks = [numpy(cell.get_dropout_mask(None)), numpy(cell.get_recurrent_dropout_mask(None))]
    for mask, channels in zip(masks, (2, 3)):
        per_element = mask.reshape(4, group.order, channels)
        assert np.all(per_element == per_element[:, :1]), "mask differs across the group"
        assert 0 < np.count_nonzero(per_element == 0) < per_element.size
    move = lambda g, xs: tuple(group.translate(g, t, -2) for t in xs)  # noqa: E731
    assert check_equivariance(step, group, (x, h, c), move,
                              regular_transform(group, -2)) < 1e-5
    without_dropout = GLSTMCell(symmetry, units=3)
    without_dropout(x.reshape(4, -1), [h.reshape(4, -1), c.reshape(4, -1)])
    assert not any("seed" in v.path for v in without_dropout.variables)
