"""The string signatures at their edges: an empty batch, and a translation that reaches the
output limit without `<eos>` (issue 69, export items).

The TensorFlow-only checks of a trained export (every input kind, a batch of 20,000) are in
tests/test_pipeline.py and tests/test_meta_seq2seq.py, next to their trained runs.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from compgen_tf import registry
from compgen_tf.analysis import export_check
from compgen_tf.models.export import export_model
from compgen_tf.models import AttentionSeq2Seq
from compgen_tf.training.evaluation import sequences_equal

STRINGS = tf.TensorSpec([None], tf.string)
NO_EOS = "no <eos> within max_output_length=3 tokens"
# Each family at its smallest, decoding at most 3 tokens.
TINY = {
    "seq2seq": dict(embedding_dim=4, hidden_units=4),
    "counting_seq2seq": dict(embedding_dim=4, hidden_units=4),
    "equivariant_seq2seq": dict(embedding_dim=4, hidden_units=4),
    "syntactic_attention": dict(semantic_dim=4, syntax_embedding_dim=4, syntax_units=4,
                                encoder_units=4),
    "transformer": dict(width=4, num_layers=1, num_heads=2, feedforward_dim=4),
}
COMMANDS = ["jump", "walk", "jump twice", "walk left", "jump and walk",
            "walk twice and jump left", "left left"]


def rows(outputs):
    return {key: (tuple(value.shape), value.dtype) for key, value in outputs.items()}


@pytest.mark.parametrize("name", sorted(TINY))
def test_the_serving_graph_answers_an_empty_batch(name):
    """As exported: traced for a batch of unknown size (in Python, where the batch's size is
    known, an empty batch always worked)."""
    model = registry.build(name, max_output_length=3, **TINY[name])
    serve = tf.function(model.serve, input_signature=[STRINGS], autograph=False)
    assert rows(serve(tf.constant([], tf.string))) == {"actions": ((0,), tf.string),
                                                       "error": ((0,), tf.string)}
    assert model.translate([], return_errors=True) == ([], [])


@pytest.fixture(scope="module")
def untrained(tmp_path_factory):
    """An untrained model that decodes 3 tokens at most, and its export: some rows end with
    `<eos>`, others reach the limit without it."""
    keras.utils.set_random_seed(0)
    model = AttentionSeq2Seq.from_words(["jump", "twice", "walk", "left", "and"],
                                        ["I_JUMP", "I_WALK", "I_TURN_LEFT"], embedding_dim=4,
                                        hidden_units=4, max_output_length=3)
    export_dir = export_model(model, tmp_path_factory.mktemp("export") / "1")
    return model, tf.saved_model.load(str(export_dir)).signatures["serving_default"], export_dir


def test_translate_and_the_export_agree_on_rows_without_eos(untrained):
    model, signature, _ = untrained
    served = export_check.translate_through(signature, COMMANDS, batch=3)
    assert NO_EOS in served[1] and "" in served[1]  # both kinds of row are there
    assert any(a for a, e in zip(*served) if not e)
    assert model.translate(COMMANDS) == served[0]
    assert model.translate(COMMANDS, return_errors=True) == served


def test_the_export_check_compares_texts_and_errors_with_the_model(untrained):
    model, _, export_dir = untrained
    pairs = [(c, "I_WALK") for c in COMMANDS]
    result = export_check.exact_match_through(export_dir, pairs, batch=4, model=model)
    assert result["python_agreement"] == {"rows": 7, "rows_differing": 0,
                                          "actions_differing": 0, "errors_differing": 0,
                                          "examples": []}
    # A difference in the error alone is a differing row.
    different = export_check.agreement(["walk", "jump"], (["", "A"], ["x", ""]),
                                       (["", "A"], ["", ""]))
    assert (different["rows_differing"], different["actions_differing"],
            different["errors_differing"]) == (1, 0, 1)
    assert different["examples"] == [{"command": "walk", "served": {"actions": "", "error": "x"},
                                      "translated": {"actions": "", "error": ""}}]


def test_a_row_without_eos_is_never_an_exact_match():
    """Evaluation scores ids: a row that reaches max_output_length without `<eos>` differs
    from every target, even one whose tokens it repeats exactly (a reference of
    max_output_length tokens, which needs one more step for its `<eos>`)."""
    unfinished = np.array([[4, 5, 6]])  # three tokens, no <eos> (id 3)
    assert not sequences_equal(unfinished, np.array([[4, 5, 6, 3]]))[0]
    assert sequences_equal(np.array([[4, 5, 3]]), np.array([[4, 5, 3, 0]]))[0]


def test_the_episode_signature_answers_empty_queries_and_agrees_with_translate_episode():
    keras.utils.set_random_seed(0)
    model = registry.build("meta_seq2seq", embedding_dim=4, hidden_units=4, num_layers=1,
                           max_output_length=3)
    serve = tf.function(model.serve_episode, input_signature=[STRINGS] * 3, autograph=False)
    empty = tf.constant([], tf.string)
    for support in ((["dax"], ["RED"]), ([], [])):
        answer = serve(*(tf.constant(s, tf.string) for s in support), empty)
        assert rows(answer) == {"actions": ((0,), tf.string), "error": ((0,), tf.string)}

    support = (["dax", "wif"], ["RED", "GREEN"])
    queries = ["dax", "wif", "dax wif", "wif dax dax", "dax dax dax wif"]
    served = export_check.translate_through(
        lambda commands: serve(*(tf.constant(s) for s in support), commands), queries, batch=5)
    assert NO_EOS in served[1]
    assert model.translate_episode(*support, queries) == served[0]
    assert model.translate_episode(*support, queries, return_errors=True) == served
