"""SCAN's language as one regular expression, checked per row inside the model's graph."""

import numpy as np
import pytest
import tensorflow as tf

from compgen_tf import registry
from tfds_scan.grammar import COMMAND_PATTERN, all_commands, is_command

UNGRAMMATICAL = ["twice", "and and and", "walk after", "left jump", "turn", "turn twice",
                 "jump twice twice", "walk left opposite", "jump and", "after walk",
                 "walk left and turn", "around left"]


def test_the_pattern_is_exactly_the_language():
    commands = all_commands()
    # RE2 in the graph, all 20,910 commands in one op, and Python's re.
    assert bool(tf.reduce_all(tf.strings.regex_full_match(list(commands), COMMAND_PATTERN)))
    assert all(map(is_command, commands))
    assert not any(map(is_command, UNGRAMMATICAL))
    assert not any(tf.strings.regex_full_match(UNGRAMMATICAL, COMMAND_PATTERN).numpy())
    # Random word strings of SCAN's vocabulary: accepted exactly when the grammar makes them.
    words = sorted({w for c in commands for w in c.split()})
    rng = np.random.default_rng(0)
    known = set(commands)
    samples = [" ".join(rng.choice(words, size=rng.integers(1, 10))) for _ in range(20000)]
    samples += [c.replace(" ", "  ", 1) for c in commands[:50]]  # spacing does not matter
    for sample in samples:
        assert is_command(sample) == (" ".join(sample.split()) in known), sample


@pytest.fixture(scope="module")
def model():
    words, actions = registry.scan_vocabularies()
    return registry.build_model("seq2seq", {"embedding_dim": 8, "hidden_units": 8},
                                words, actions)


def test_a_scan_model_refuses_ungrammatical_commands_per_row(model):
    assert model.command_grammar == "scan"
    commands = UNGRAMMATICAL + ["jump twice after walk left", "jump dax", "", "walk   left"]
    out = model.serve(tf.constant(commands))
    errors = [e.decode() for e in out["error"].numpy()]
    actions = [a.decode() for a in out["actions"].numpy()]
    n = len(UNGRAMMATICAL)
    assert errors[:n] == ["not a SCAN command"] * n and actions[:n] == [""] * n
    # A grammatical command gets no grammar error (an untrained model may still not finish);
    # an unknown word or an empty command keeps its own, more precise, error.
    assert errors[n] != "not a SCAN command" and errors[n + 3] != "not a SCAN command"
    assert errors[n + 1:n + 3] == ["unknown word(s): dax", "empty command"]
    with pytest.raises(ValueError, match="not a SCAN command: 'walk after'"):
        model.translate(["walk after"])
    assert len(model.translate(["walk left"])) == 1


def test_the_grammar_is_part_of_the_model(model, tmp_path):
    import keras

    path = tmp_path / "m.keras"
    model.save(path)
    assert keras.saving.load_model(path).command_grammar == "scan"
    plain = registry.build_model("seq2seq", {"embedding_dim": 8, "command_grammar": None},
                                 *registry.scan_vocabularies())
    assert plain.serve(tf.constant(["walk after"]))["error"].numpy()[0] != b"not a SCAN command"
    with pytest.raises(ValueError, match="bad model_args|command_grammar must be one of"):
        registry.build_model("seq2seq", {"command_grammar": "english"},
                             *registry.scan_vocabularies())
