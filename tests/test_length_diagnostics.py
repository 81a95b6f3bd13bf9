"""`tools/length_oracle_decoding.py` (`compgen_tf.analysis.length_oracle`): decoding with the
true output length given; and the other length diagnostics of `compgen_tf.analysis`."""

import keras
import pytest
from keras import ops

from compgen_tf import registry
from compgen_tf.analysis import length_oracle as oracle
from compgen_tf.tokens import EOS_ID


def test_decoding_with_the_true_length_emits_exactly_that_many_actions():
    keras.utils.set_random_seed(0)
    words, actions = registry.scan_vocabularies()
    model = registry.build_model("syntactic_attention", {}, words, actions)
    # An untrained model may stop at once; with <eos> made unlikely free decoding runs
    # its full budget, so every row below is compared.
    bias = model.backbone.decoder.output_projection.bias
    bias.assign(ops.where(ops.arange(bias.shape[0]) == EOS_ID, -30.0, bias))
    commands = ["jump twice", "walk left after run thrice", "look"]
    source_ids, _ = model.encode_commands(commands)
    lengths = [3, 1, 7]
    decoded = oracle.decoded_strings(model.decode_actions(
        oracle.decode_with_length(model, source_ids, lengths, 16))[0])
    assert [len(d.split()) for d in decoded] == lengths
    assert all(set(d.split()) <= set(actions) for d in decoded)
    # Wherever free decoding runs at least as long, the forced decoding is its first steps:
    # before the given length only <eos> is masked.
    free = oracle.decoded_strings(model.decode_actions(model.greedy_decode(source_ids, 16))[0])
    checked = 0
    for forced, unforced, n in zip(decoded, free, lengths):
        if len(unforced.split()) >= n:
            assert forced.split() == unforced.split()[:n]
            checked += 1
    assert checked == 3


def test_the_true_length_overrides_a_decoder_that_wants_to_stop_at_once():
    keras.utils.set_random_seed(0)
    words, actions = registry.scan_vocabularies()
    model = registry.build_model("syntactic_attention", {}, words, actions)
    decoder = model.backbone.decoder
    step = decoder.greedy_step

    def eager_to_stop(previous, state, memory, constants):
        logits, state, weights = step(previous, state, memory, constants)
        return logits + 100.0 * ops.cast(ops.equal(ops.arange(logits.shape[-1]), EOS_ID),
                                         logits.dtype), state, weights

    decoder.greedy_step = eager_to_stop
    source_ids, _ = model.encode_commands(["jump twice", "look"])
    free = oracle.decoded_strings(model.decode_actions(model.greedy_decode(source_ids, 16))[0])
    assert free == ["", ""]
    forced = oracle.decoded_strings(model.decode_actions(
        oracle.decode_with_length(model, source_ids, [4, 2], 16))[0])
    assert [len(f.split()) for f in forced] == [4, 2]


def test_decoding_with_given_lengths_is_decoding_with_those_lengths():
    """`--lengths`: where a given length equals the true one, the decoding is the one with the
    true length; elsewhere the output has the given length."""
    keras.utils.set_random_seed(0)
    words, actions = registry.scan_vocabularies()
    model = registry.build_model("syntactic_attention", {}, words, actions)
    # Free decoding is `translate`, checked elsewhere; what matters here is the forced paths.
    model.translate = lambda batch: ["free"] * len(batch)
    commands = ["jump twice", "walk left after run thrice", "look", "turn around right"]
    true_lengths, given = [2, 5, 1, 8], [2, 5, 3, 6]
    free, forced, predicted = oracle.decode_three_ways(model, commands, true_lengths, given,
                                                       12, batch_size=3)
    assert free == ["free"] * 4
    assert [len(f.split()) for f in forced] == true_lengths
    assert [len(p.split()) for p in predicted] == given
    assert predicted[:2] == forced[:2]


def test_clause_coverage_of_the_length_splits():
    """`tools/length_clause_coverage.py`: which test commands only join seen clauses."""
    from compgen_tf.analysis import clause_coverage as coverage

    assert coverage.clauses("jump twice after walk left") == ["jump twice", "walk left"]
    official = coverage.coverage(22, (24, 48))
    assert (official["test_commands"], official["test_commands_with_every_clause_seen"]) == (
        3920, 776)
    assert official["unseen_clauses"] == 8 and official["unseen_clause_output_lengths"] == [24]
    dev = coverage.coverage(16, (18, 22))
    assert dev["share"] == 1.0 and dev["unseen_clauses"] == 0


def test_the_loss_without_eos_leaves_out_exactly_the_eos_targets():
    """`tools/length_without_eos.py`: the probe's loss counts every action, no `<eos>`."""
    import tensorflow as tf

    from compgen_tf.analysis import without_eos as no_eos

    keras.utils.set_random_seed(0)
    words, actions = registry.scan_vocabularies()
    model = registry.build_model("seq2seq", {"hidden_units": 4, "embedding_dim": 4}, words,
                                 actions)
    model.teacher_forcing_ratio = 1.0
    source_ids, _ = model.encode_commands(["jump twice", "walk"])
    target_ids = model.encode_actions(["I_JUMP I_JUMP", "I_WALK"])  # 2 + 1 actions, 2 <eos>
    with_eos, tokens = model.token_loss((source_ids, target_ids), training=False)
    no_eos.without_eos_loss(model)
    without, fewer = model.token_loss((source_ids, target_ids), training=False)
    assert (float(tokens), float(fewer)) == (5.0, 3.0)
    logits = model.compute_logits(source_ids, target_ids)
    eos = tf.equal(target_ids, EOS_ID)
    eos_part = ops.sum(ops.where(eos, ops.sparse_categorical_crossentropy(
        target_ids, logits, from_logits=True), 0.0))
    assert abs(float(with_eos) - float(eos_part) - float(without)) < 1e-4


def test_errors_by_clause_order_puts_each_command_by_where_its_longest_clause_comes():
    """`tools/length_errors_by_clause_order.py`."""
    import tfds_scan

    from compgen_tf.analysis import clause_order as by_order

    interpret = tfds_scan.interpret
    # `after` swaps the clauses in the output: the 16 actions of `walk around left twice`
    # come first there, last with `and`.
    assert by_order.clause_order_class("walk around left twice after jump", interpret) == (
        "longest second")
    assert by_order.clause_order_class("walk around left twice and jump", interpret) == (
        "longest first")
    assert by_order.clause_order_class("jump twice and walk left", interpret) == "equal"
    assert by_order.clause_order_class("jump", interpret) == "single clause"
    commands = ["walk around left twice and jump", "jump and walk around left twice",
                "look thrice after run", "walk"]
    assert by_order.breakdown(commands, ["jump and walk around left twice", "walk"],
                              interpret) == {
        "single clause": {"commands": 1, "wrong": 1, "wrong_share": 1.0},
        "longest first": {"commands": 1, "wrong": 0, "wrong_share": 0.0},
        "longest second": {"commands": 2, "wrong": 1, "wrong_share": 0.5}}
    # Of the two wrong commands, `walk` came out with the wrong number of actions.
    counted = by_order.breakdown(commands, ["jump and walk around left twice", "walk"],
                                 interpret, wrong_length={"walk"})
    assert [(row["wrong"], row["wrong_length"]) for row in counted.values()] == [
        (1, 1), (0, 0), (1, 0)]
    # `jump twice and walk`: the first clause's two jumps, then a third one at the boundary.
    place = by_order.first_error_place
    assert place("jump twice and walk", "I_JUMP I_JUMP I_WALK", "I_JUMP I_JUMP I_JUMP",
                 interpret) == "boundary"
    assert place("walk after jump twice", "I_JUMP I_JUMP I_WALK", "I_JUMP I_WALK I_WALK",
                 interpret) == "first clause"
    assert place("jump and walk twice", "I_JUMP I_WALK I_WALK", "I_JUMP I_WALK I_JUMP",
                 interpret) == "second clause"
    assert place("walk twice", "I_WALK I_WALK", "I_WALK", interpret) == "single clause"
    # A run's breakdown from its error rows: every place counted in every class.
    rows = [{"command": "jump and walk around left twice", "expected": "I_JUMP " + " ".join(
                ["I_TURN_LEFT I_WALK"] * 8), "predicted": "I_JUMP " + " ".join(
                ["I_TURN_LEFT I_WALK"] * 7)},
            {"command": "walk", "expected": "I_WALK", "predicted": "I_JUMP"}]
    run = by_order.run_breakdown(commands, rows, interpret)
    assert run["longest second"]["first_error"] == {
        "single clause": 0, "first clause": 0, "boundary": 0, "second clause": 1}
    assert run["longest second"]["wrong_length"] == 1
    assert run["single clause"]["first_error"]["single clause"] == 1
    assert run["longest first"]["first_error"] == dict.fromkeys(by_order.PLACES, 0)
    with pytest.raises(ValueError, match="not test commands of this split"):
        by_order.run_breakdown(commands, [{"command": "run", "expected": "I_RUN",
                                           "predicted": "I_WALK"}], interpret)
