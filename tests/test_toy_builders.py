"""The TFDS builders of the toy tasks, built offline into a temporary data_dir."""

import numpy as np
import pytest
import tensorflow_datasets as tfds

from tfds_scan import ToyComposition, ToyPalindromes, ToyRuleLearning, toy_tasks
from tfds_scan.toy_palindromes import ToyPalindromesConfig


def _examples(builder, split):
    return list(tfds.as_numpy(builder.as_dataset(split=split)))


def test_rule_learning_builder(tmp_path):
    builder = ToyRuleLearning(data_dir=tmp_path)
    builder.download_and_prepare()
    train, test = _examples(builder, "train"), _examples(builder, "test")
    assert (len(train), len(test)) == (32, 8)
    expected = toy_tasks.rule_learning()["test"]
    assert [e["sentence"].decode() for e in test] == [" ".join(s) for s, _ in expected]
    assert [e["label"] for e in test] == [label for _, label in expected]
    np.testing.assert_array_equal(np.stack([e["array"] for e in test]),
                                  toy_tasks.rule_learning_array([s for s, _ in expected]))
    train_syllables = {s for e in train for s in e["sentence"].decode().split()}
    assert not train_syllables & {s for e in test for s in e["sentence"].decode().split()}


def test_composition_builder_holds_out_its_seeds_combinations(tmp_path):
    builder = ToyComposition(config="seed1", data_dir=tmp_path)
    builder.download_and_prepare()
    train, test = _examples(builder, "train"), _examples(builder, "test")
    expected = toy_tasks.composition(1)
    assert [(e["commands"].decode(), e["actions"].decode()) for e in test] == expected["test"]
    assert len(train) + len(test) == 1000
    assert {e["commands"].decode() for e in test} == set(expected["held_out"])
    assert not {e["commands"].decode() for e in train} & set(expected["held_out"])


def test_palindrome_builder_standard_and_depth(tmp_path):
    small = dict(train_size=300, test_size=30)
    standard = ToyPalindromes(config=ToyPalindromesConfig(name="small", **small),
                              data_dir=tmp_path)
    standard.download_and_prepare()
    splits = {name: _examples(standard, name) for name in ("train", "test", "long")}
    assert {name: len(v) for name, v in splits.items()} == {"train": 300, "test": 30, "long": 30}
    texts = {name: [e["text"].decode() for e in v] for name, v in splits.items()}
    assert all(toy_tasks.is_palindrome_sentence(t) for v in texts.values() for t in v)
    assert not set(texts["test"]) & set(texts["train"])
    assert {e["length"] for e in splits["long"]} == set(toy_tasks.LONG_LENGTHS)
    assert texts["train"] == toy_tasks.palindromes(0, **small)["train"]

    depth = ToyPalindromes(config=ToyPalindromesConfig(name="small_depth", depth=True, **small),
                           data_dir=tmp_path)
    depth.download_and_prepare()
    assert set(depth.info.splits) == {"train", "test"}
    assert max(e["a_count"] for e in _examples(depth, "train")) <= toy_tasks.DEPTH_LIMIT
    assert min(e["a_count"] for e in _examples(depth, "test")) > toy_tasks.DEPTH_LIMIT
    assert [c.name for c in ToyPalindromes.BUILDER_CONFIGS] == ["standard", "depth"]


@pytest.mark.parametrize("task, seed", [("rule_learning", 0), ("composition", 0),
                                        ("composition", 7), ("palindromes", 3),
                                        ("palindromes_depth", 3)])
def test_load_toy_reads_what_the_generator_draws_through_tfds(task, seed, tmp_path):
    """Training reads the toy tasks through their TFDS builders: the same examples in the same
    order as `tfds_scan.toy_tasks`, for registered configs and for seeds or sizes without one."""
    from tfds_scan import load_toy

    loaded = load_toy(task, seed, train_size=120, test_size=12, data_dir=tmp_path)
    if task == "rule_learning":
        expected = toy_tasks.rule_learning()
    elif task == "composition":
        expected = toy_tasks.composition(seed)
        expected = {split: expected[split] for split in ("train", "test")}
    else:
        drawn = toy_tasks.palindromes(seed, 120, 12)
        keys = ("depth_train", "depth_test") if task == "palindromes_depth" else (
            "train", "test", "long")
        expected = {key: drawn[key] for key in keys}
    assert loaded == expected
    built = sorted(p.name for p in tmp_path.iterdir()
                   if not p.name.startswith(".") and p.name != "downloads")
    assert built == [{"rule_learning": "toy_rule_learning", "composition": "toy_composition"}
                     .get(task, "toy_palindromes")]
