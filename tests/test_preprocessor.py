"""`Seq2SeqPreprocessor`, the one vocabulary: its layout, the ids and per-row errors of odd
inputs, row by row and in a batch, and the errors it raises on the Python side."""

import json

import numpy as np
import pytest
import tensorflow as tf

from compgen_tf.models.preprocessor import (SPECIAL_TOKENS, Seq2SeqPreprocessor,
                                            UnknownTokenError, vocabulary_words)
from tfds_scan import grammar
from compgen_tf.tokens import EOS_ID, PAD_ID, SOS_ID

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


# What the Python `Vocabulary` (compgen_tf/vocabulary.py, gone) asserted, now of the preprocessor.
def test_layout_specials_first_then_sorted_words():
    words = vocabulary_words(["walk twice", "jump"])
    layer = Seq2SeqPreprocessor(words, words)
    assert layer.source_vocabulary == list(SPECIAL_TOKENS) + ["jump", "twice", "walk"]
    assert layer.source_vocabulary_size == 7
    ids, _ = layer.encode_commands(tf.constant(["walk twice"]))
    assert ids.numpy().tolist() == [[6, 5, EOS_ID]]
    assert [layer.source_id(w) for w in ("walk", "twice")] == [6, 5]
    actions, _ = layer.decode_actions(tf.constant([[6, 5, EOS_ID, 4], [4, PAD_ID, 4, PAD_ID]]))
    assert [a.decode() for a in actions.numpy()] == ["walk twice", "jump jump"]


def test_unknown_word_error_names_word_and_vocabulary():
    layer = Seq2SeqPreprocessor(vocabulary_words(["walk"]), ["I_WALK"])
    with pytest.raises(UnknownTokenError,
                       match=r"source vocabulary has no entry for \['dax', 'zup'\].*walk"):
        layer.check_commands(["walk dax", "zup"])
    with pytest.raises(UnknownTokenError, match=r"target vocabulary has no entry for \['I_RUN'\]"):
        layer.check_actions(["I_WALK I_RUN"])
    with pytest.raises(UnknownTokenError, match=r"source vocabulary has no entry for \['dax'\]"):
        layer.source_id("dax")
    layer.check_commands(["walk walk"])  # valid: nothing raised
    layer.check_actions(["I_WALK"])


def test_python_side_errors_are_the_graphs():
    layer = Seq2SeqPreprocessor(WORDS, ACTIONS, max_input_length=4, command_grammar="scan")
    with pytest.raises(ValueError, match="^empty command$"):
        layer.check_commands(["jump", " "])
    with pytest.raises(ValueError, match=r"^command 'jump jump jump jump jump' has 5 words, "
                                         r"the model accepts at most 4 \(max_input_length\)$"):
        layer.check_commands(["jump jump jump jump jump"])
    with pytest.raises(ValueError, match="^not a SCAN command: 'twice'$"):
        layer.check_commands(["twice"])
    # An over-long command's unknown words are named too (the graph reports only its length).
    with pytest.raises(UnknownTokenError, match=r"\['fly'\]"):
        layer.check_commands(["jump jump jump jump fly"])


@pytest.mark.parametrize("words", [["a", "a"], ["<pad>"], ["two words"], [""]])
def test_bad_words_rejected(words):
    with pytest.raises(ValueError, match="source: "):
        Seq2SeqPreprocessor(words, ["x"])
    with pytest.raises(ValueError, match="target: "):
        Seq2SeqPreprocessor(["x"], words)


def test_json_config_round_trip():
    layer = Seq2SeqPreprocessor(["x", "y"], ["A"], max_input_length=5,
                                source_starts_with_sos=True, command_grammar="scan")
    again = Seq2SeqPreprocessor.from_config(json.loads(json.dumps(layer.get_config())))
    assert again.get_config() == layer.get_config()
    assert again.source_vocabulary == layer.source_vocabulary
    commands = tf.constant(["x y", "y", "z"])
    for a, b in zip(layer.encode_commands(commands), again.encode_commands(commands)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
