import numpy as np
import pytest

from tfds_scan import toy_tasks


def test_rule_learning_sentences_labels_and_encoding():
    data = toy_tasks.rule_learning()
    assert len(data["train"]) == 32 and len(data["test"]) == 8
    for sentence, label in data["train"] + data["test"]:
        a, b, last = sentence
        assert a != b and (last == a) == (label == 0) and (last == b) == (label == 1)
    train_syllables = {s for sentence, _ in data["train"] for s in sentence}
    test_syllables = {s for sentence, _ in data["test"] for s in sentence}
    assert train_syllables == set(toy_tasks.TRAIN_A + toy_tasks.TRAIN_B)
    assert not train_syllables & test_syllables
    array = toy_tasks.rule_learning_array([("wo", "fe", "wo")])
    assert array.shape == (1, 12, 3) and array.sum() == 3
    assert array[0, toy_tasks.SYLLABLES.index("wo")].tolist() == [1, 0, 1]
    assert array[0, toy_tasks.SYLLABLES.index("fe")].tolist() == [0, 1, 0]


def test_composition_holds_out_three_combinations_exactly():
    data = toy_tasks.composition(seed=3)
    assert len(data["train"]) + len(data["test"]) == 1000
    assert len(data["held_out"]) == 3
    assert {c for c, _ in data["test"]} == set(data["held_out"])
    assert not {c for c, _ in data["train"]} & set(data["held_out"])
    assert toy_tasks.compose("jump four") == "JUMP JUMP JUMP JUMP"
    assert all(a == toy_tasks.compose(c) for c, a in data["train"] + data["test"])
    assert toy_tasks.composition(seed=3) == data
    assert toy_tasks.composition(seed=4)["held_out"] != data["held_out"]
    with pytest.raises(ValueError, match="not a composition command"):
        toy_tasks.compose("jump eleven")


def test_palindrome_grammar_membership():
    assert toy_tasks.is_palindrome_sentence("a b o b a")
    assert toy_tasks.is_palindrome_sentence("o")
    assert not toy_tasks.is_palindrome_sentence("a b o a b")
    assert not toy_tasks.is_palindrome_sentence("a e o e a")
    assert not toy_tasks.is_palindrome_sentence("a o o a")


def test_palindrome_splits():
    data = toy_tasks.palindromes(seed=0, train_size=3000, test_size=200)
    for name, strings in data.items():
        assert all(toy_tasks.is_palindrome_sentence(s) for s in strings), name
    lengths = lambda strings: {len(s.split()) for s in strings}  # noqa: E731
    assert lengths(data["train"]) == set(toy_tasks.TRAIN_LENGTHS)
    assert lengths(data["test"]) <= set(toy_tasks.TRAIN_LENGTHS)
    assert lengths(data["long"]) == set(toy_tasks.LONG_LENGTHS)
    assert not set(data["test"]) & set(data["train"])
    assert max(map(toy_tasks.a_count, data["depth_train"])) <= 4
    assert min(map(toy_tasks.a_count, data["depth_test"])) > 4
    assert len(data["train"]) == 3000 and len(data["test"]) == 200
    again = toy_tasks.palindromes(seed=0, train_size=3000, test_size=200)
    assert again == data
    counts = np.bincount([len(s.split()) for s in data["train"]])
    assert len(set(counts[list(toy_tasks.TRAIN_LENGTHS)])) == 1  # lengths cycled evenly
