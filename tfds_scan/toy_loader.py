"""The toy tasks of "Symmetry and systematicity" read through their TFDS builders.

`load_toy(task, seed, ...)` returns the same Python lists as `tfds_scan.toy_tasks`
(same examples, same order) but reads them from the task's builder (`ToyRuleLearning`,
`ToyComposition`, `ToyPalindromes`), built offline into the data directory on first use.
A seed or size without a registered builder config gets a config of its own
(`seed7`, `standard_seed3_train120_test12`, ...), so every draw the training tools use is a
TFDS dataset that anyone can inspect with `tfds`.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import tensorflow_datasets as tfds

from tfds_scan.loader import build_once, default_data_dir
from tfds_scan.toy_composition import ToyComposition, ToyCompositionConfig
from tfds_scan.toy_palindromes import ToyPalindromes, ToyPalindromesConfig
from tfds_scan.toy_rule_learning import ToyRuleLearning

TASKS = ("rule_learning", "composition", "palindromes", "palindromes_depth")


def load_toy(task: str, seed: int = 0, train_size: int = 100_000, test_size: int = 1_000,
             data_dir=None) -> dict:
    """The splits of toy `task`, as `tfds_scan.toy_tasks` returns them, read through TFDS.

    Args:
        task: one of `TASKS`.
        seed: the draw (composition and palindromes; rule learning has one).
        train_size, test_size: palindromes only (see `toy_tasks.palindromes`).
        data_dir: TFDS data directory; default `default_data_dir()`.

    Returns:
        rule_learning: {"train", "test": [((syllable, syllable, syllable), label)]};
        composition: {"train", "test": [(command, actions)]};
        palindromes: {"train", "test", "long": [string]};
        palindromes_depth: {"depth_train", "depth_test": [string]}.
    """
    data_dir = Path(data_dir if data_dir else default_data_dir())
    if task == "rule_learning":
        builder = build_once(lambda: ToyRuleLearning(data_dir=os.fspath(data_dir)), data_dir)
        columns = {split: _columns(builder, split) for split in ("train", "test")}
        return {split: [(tuple(sentence.decode().split()), int(label)) for sentence, label
                        in zip(column["sentence"], column["label"])]
                for split, column in columns.items()}
    if task == "composition":
        config = _config(ToyComposition, ToyCompositionConfig(name=f"seed{seed}", seed=seed))
        builder = build_once(lambda: ToyComposition(config=config, data_dir=os.fspath(data_dir)),
                             data_dir)
        columns = {split: _columns(builder, split) for split in ("train", "test")}
        return {split: [(command.decode(), actions.decode()) for command, actions
                        in zip(column["commands"], column["actions"])]
                for split, column in columns.items()}
    if task in ("palindromes", "palindromes_depth"):
        depth = task == "palindromes_depth"
        name = "depth" if depth else "standard"
        if (seed, train_size, test_size) != (0, 100_000, 1_000):
            name += f"_seed{seed}_train{train_size}_test{test_size}"
        config = _config(ToyPalindromes, ToyPalindromesConfig(
            name=name, depth=depth, seed=seed, train_size=train_size, test_size=test_size))
        builder = build_once(lambda: ToyPalindromes(config=config, data_dir=os.fspath(data_dir)),
                             data_dir)
        splits = {"depth_train": "train", "depth_test": "test"} if depth else {
            "train": "train", "test": "test", "long": "long"}
        return {key: [text.decode() for text in _columns(builder, split)["text"]]
                for key, split in splits.items()}
    raise ValueError(f"unknown toy task {task!r}; one of {list(TASKS)}")


def _config(builder_class, config):
    """A registered config by its name (TFDS refuses a new config under a registered name),
    else `config` itself."""
    registered = {c.name: c for c in builder_class.BUILDER_CONFIGS}
    if config.name in registered:
        if registered[config.name] != dataclasses.replace(
                config, description=registered[config.name].description):
            raise ValueError(f"{config} differs from the registered {registered[config.name]}")
        return config.name
    return config


def _columns(builder, split) -> dict:
    """The whole split as one batch of numpy columns (much faster than row by row), in
    generation order: one file at a time, in file order."""
    read_config = tfds.ReadConfig(interleave_cycle_length=1)
    return tfds.as_numpy(builder.as_dataset(split=split, shuffle_files=False, batch_size=-1,
                                            read_config=read_config))
