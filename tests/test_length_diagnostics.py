"""`scripts/length_oracle_decoding.py`: decoding with the true output length given."""

import importlib.util

import keras

from compgen_tf import registry

spec = importlib.util.spec_from_file_location("oracle", "scripts/length_oracle_decoding.py")
oracle = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oracle)


def test_decoding_with_the_true_length_emits_exactly_that_many_actions():
    keras.utils.set_random_seed(0)
    words, actions = registry.scan_vocabularies()
    model = registry.build_model("syntactic_attention", {}, words, actions)
    commands = ["jump twice", "walk left after run thrice", "look"]
    source_ids, _ = model.encode_commands(commands)
    lengths = [3, 1, 7]
    decoded = oracle._strings(model.decode_actions(
        oracle.decode_with_length(model, source_ids, lengths, 16))[0])
    assert [len(d.split()) for d in decoded] == lengths
    assert all(set(d.split()) <= set(actions) for d in decoded)
    # Wherever free decoding runs at least as long, the forced decoding is its first steps:
    # before the given length only <eos> is masked.
    free = oracle._strings(model.decode_actions(model.greedy_decode(source_ids, 16))[0])
    checked = 0
    for forced, unforced, n in zip(decoded, free, lengths):
        if len(unforced.split()) >= n:
            assert forced.split() == unforced.split()[:n]
            checked += 1
    assert checked >= 2
