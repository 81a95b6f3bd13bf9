"""`WeightedAutomaton`: exact arithmetic against a NumPy reference, padding, direction, and
SCAN's output length written as one automaton (the count the layer exists to learn)."""

import keras
import numpy as np
import pytest
from keras import ops

from compgen_tf.layers import WeightedAutomaton
from tfds_scan.grammar import all_commands, interpret

numpy = ops.convert_to_numpy


def reference(layer, ids, go_backwards):
    """The automaton in plain NumPy, one row and one token at a time."""
    deltas, offsets, initial, readout = (numpy(w) for w in (
        layer.deltas, layer.offsets, layer.initial_state, layer.readout))
    out = []
    for row in ids:
        state = initial.astype(np.float64)
        for token in (row[::-1] if go_backwards else row):
            if token != layer.padding_id:
                state = (np.eye(len(state)) + deltas[token]) @ state + offsets[token]
        out.append(readout @ state)
    return np.array(out)


@pytest.mark.parametrize("go_backwards", [True, False])
def test_matches_the_reference_and_skips_padding(go_backwards):
    layer = WeightedAutomaton(7, state_size=3, go_backwards=go_backwards,
                              delta_initializer=keras.initializers.RandomNormal(stddev=0.3,
                                                                                seed=1),
                              vector_initializer=keras.initializers.RandomNormal(seed=2))
    ids = np.array([[3, 4, 5, 6], [6, 5, 4, 3], [2, 0, 0, 0], [0, 0, 0, 0]])
    out = numpy(layer(ids))
    np.testing.assert_allclose(out, reference(layer, ids, go_backwards), rtol=1e-5, atol=1e-5)
    # Reversed rows give other values: the maps do not commute, so the direction matters.
    assert abs(out[0] - out[1]) > 1e-3
    # Padding anywhere (here: in front) changes nothing; an empty row reads v_0 alone.
    padded = np.array([[0, 0, 3, 4, 5, 6], [0, 2, 0, 0, 0, 0]])
    np.testing.assert_allclose(numpy(layer(padded)), out[[0, 2]], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out[3], numpy(layer.readout) @ numpy(layer.initial_state),
                               rtol=1e-6)


def test_validates_its_arguments():
    with pytest.raises(ValueError, match="state_size must be a positive integer, got 0"):
        WeightedAutomaton(5, state_size=0)
    with pytest.raises(ValueError, match=r"padding_id must be None or an id in \[0, 5\), got 7"):
        WeightedAutomaton(5, padding_id=7)
    with pytest.raises(ValueError, match="go_backwards must be true or false"):
        WeightedAutomaton(5, go_backwards="yes")


def scan_length_automaton(words):
    """The weights under which the automaton, reading right to left, counts SCAN's actions.

    State (T, M, D): T the actions of the clauses already read, M how many times the
    current clause's verb acts, D how many turns it makes. A repetition multiplies M and D,
    a direction adds M turns, `around` makes four of everything, `opposite` doubles the
    turns, a verb adds M + D to T (`turn`: D), a conjunction starts a new clause.
    """
    vocabulary = ["<pad>"] + words
    k = 3
    transitions = np.tile(np.eye(k), (len(vocabulary), 1, 1))
    offsets = np.zeros((len(vocabulary), k))
    for index, word in enumerate(vocabulary):
        a = transitions[index]
        if word in ("twice", "thrice"):
            a[1, 1] = a[2, 2] = {"twice": 2, "thrice": 3}[word]
        elif word in ("left", "right"):
            a[2] = [0, 1, 1]                                # D += M
        elif word == "around":
            a[1, 1] = a[2, 2] = 4
        elif word == "opposite":
            a[2, 2] = 2
        elif word in ("walk", "look", "run", "jump"):
            a[0] = [1, 1, 1]                                # T += M + D
        elif word == "turn":
            a[0] = [1, 0, 1]                                # T += D
        elif word in ("and", "after"):
            a[1, 1] = a[2, 2] = 0                           # M = 1, D = 0
            offsets[index] = [0, 1, 0]
    return vocabulary, transitions - np.eye(k), offsets


def test_represents_scan_output_length_exactly_on_every_command():
    commands = all_commands()
    words = sorted({w for command in commands for w in command.split()})
    vocabulary, deltas, offsets = scan_length_automaton(words)
    layer = WeightedAutomaton(len(vocabulary), state_size=3)
    layer.build((None, None))
    layer.set_weights([deltas, offsets, np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0])])
    index = {w: i for i, w in enumerate(vocabulary)}
    ids = np.zeros((len(commands), 9), "int32")
    for row, command in enumerate(commands):
        tokens = [index[w] for w in command.split()]
        ids[row, :len(tokens)] = tokens
    lengths = np.array([len(interpret(command).split()) for command in commands])
    assert len(commands) == 20910 and lengths.max() == 48
    np.testing.assert_array_equal(numpy(layer(ids)), lengths)


def test_runs_traced_with_an_unknown_length():
    # Inside `fit` the command length is unknown when the graph is traced.
    import tensorflow as tf

    layer = WeightedAutomaton(7, state_size=3)
    traced = tf.function(layer, input_signature=[tf.TensorSpec([None, None], tf.int32)])
    ids = np.array([[3, 4, 0], [5, 0, 0]], "int32")
    np.testing.assert_allclose(traced(ids).numpy(), numpy(layer(ids)), atol=1e-6)
