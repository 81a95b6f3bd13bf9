"""`Seq2SeqPreprocessor`: the ids and per-row errors of odd inputs, row by row and in a batch."""

import numpy as np
import pytest
import tensorflow as tf

from compgen_tf.models.preprocessor import Seq2SeqPreprocessor
from tfds_scan import grammar
from compgen_tf.vocabulary import EOS_ID, PAD_ID, SOS_ID

WORDS = ["jump", "left", "twice", "walk"]  # ids 4, 5, 6, 7
ACTIONS = ["I_JUMP", "I_TURN_LEFT", "I_WALK"]  # ids 4, 5, 6
J, L, T, W = 4, 5, 6, 7

# command -> (the ids between <sos> and <eos>, the error); an invalid command becomes empty.
CASES = {
    "jump twice": ([J, T], ""),
    "  walk \t left\n": ([W, L], ""),
    "walk   left  twice": ([W, L, T], ""),
    "fly jump swim": ([], "unknown word(s): fly swim"),
    "jump fly   jump  swim": ([], "unknown word(s): fly swim"),
    "jump jump jump jump jump": ([], "command too long: 5 words, the maximum is 4"),
    "fly fly fly fly fly": ([], "command too long: 5 words, the maximum is 4"),
    "": ([], "empty command"),
    " \t ": ([], "empty command"),
}


def preprocessor(with_sos):
    return Seq2SeqPreprocessor(WORDS, ACTIONS, max_input_length=4,
                               source_starts_with_sos=with_sos)


def expected_ids(words, with_sos, width):
    row = ([SOS_ID] if with_sos else []) + words + [EOS_ID]
    return row + [PAD_ID] * (width - len(row))


@pytest.mark.parametrize("with_sos", [False, True])
def test_every_case_alone_and_in_one_batch(with_sos):
    layer = preprocessor(with_sos)
    commands = list(CASES)
    ids, errors = layer.encode_commands(tf.constant(commands))
    # The width is that of the longest *valid* row: invalid rows are emptied first.
    width = 3 + with_sos + 1
    assert ids.shape == (len(commands), width) and ids.dtype == tf.int32
    for row, command in enumerate(commands):
        words, error = CASES[command]
        assert errors[row].numpy().decode() == error, command
        assert ids[row].numpy().tolist() == expected_ids(words, with_sos, width), command
        alone_ids, alone_error = layer.encode_commands(tf.constant([command]))
        assert alone_error.numpy()[0] == errors[row].numpy()
        assert alone_ids.shape[1] == len(words) + 1 + with_sos
        assert alone_ids[0].numpy().tolist() == expected_ids(words, with_sos, alone_ids.shape[1])


def test_an_empty_batch():
    layer = preprocessor(True)
    ids, errors = layer.encode_commands(tf.constant([], tf.string))
    assert ids.shape[0] == 0 and errors.shape == (0,)
    actions, finished = layer.decode_actions(ids)
    assert actions.shape == (0,) and finished.shape == (0,)


def test_every_scan_command_in_one_batch_with_the_grammar_check():
    commands = grammar.all_commands()
    words = sorted({word for command in commands for word in command.split()})
    layer = Seq2SeqPreprocessor(words, ["I_JUMP"], max_input_length=9,
                                source_starts_with_sos=True, command_grammar="scan")
    ids, errors = layer.encode_commands(tf.constant(commands))
    assert not any(errors.numpy()), "a SCAN command was refused"
    index = {word: 4 + i for i, word in enumerate(words)}
    expected = np.zeros((len(commands), 11), np.int32)  # <sos>, 9 words at most, <eos>
    for row, command in enumerate(commands):
        tokens = [2] + [index[word] for word in command.split()] + [3]
        expected[row, :len(tokens)] = tokens
    np.testing.assert_array_equal(ids.numpy(), expected)


def test_decode_actions_stops_at_the_first_eos_and_skips_specials():
    layer = preprocessor(False)
    ids = tf.constant([[4, 6, EOS_ID, 5, 5],          # stops at <eos>
                       [SOS_ID, 4, PAD_ID, 5, EOS_ID],  # <sos> and <pad> are never words
                       [6, 6, 6, 6, 6],                 # never ended
                       [EOS_ID, 4, 4, 4, 4],            # empty translation
                       [1, 4, EOS_ID, 0, 0]], tf.int32)  # <unk> is shown as such
    actions, finished = layer.decode_actions(ids)
    assert [a.decode() for a in actions.numpy()] == [
        "I_JUMP I_WALK", "I_JUMP I_TURN_LEFT", "I_WALK I_WALK I_WALK I_WALK I_WALK", "",
        "<unk> I_JUMP"]
    assert finished.numpy().tolist() == [True, True, False, True, True]
