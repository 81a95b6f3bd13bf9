"""Tests of ``tfds_scan``: grammar, official splits, the TFDS builder and ``load``.

Comparisons with the official SCAN files need ``../shared/scan`` next to the repository and
are skipped without it; the builder and ``load`` tests run anywhere.
"""

from __future__ import annotations

import collections
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

import tfds_scan
from tfds_scan import grammar, splits
from tfds_scan.tools import make_orders

SCAN_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "scan"
BUILT_CONFIGS = ("addprim_jump", "simple", "template_jump_around_right")
DETERMINISTIC_CONFIGS = tuple(
    name
    for name in splits.CONFIG_NAMES
    if not name.startswith(("simple", "addprim_jump_num"))
    and name not in splits.MCD_CONFIG_NAMES  # in the published files' order
)


@pytest.fixture(scope="module")
def scan_dir() -> Path:
    if not SCAN_DIR.is_dir():
        pytest.skip(f"official SCAN files not found at {SCAN_DIR}")
    return SCAN_DIR


@pytest.fixture(scope="module")
def fingerprints(scan_dir) -> dict[str, tuple[int, int, str]]:
    rows = (scan_dir / "fingerprints.tsv").read_text(encoding="utf-8").splitlines()[1:]
    table = {}
    for row in rows:
        path, lines, unique, sha256 = row.split("\t")
        table[path] = (int(lines), int(unique), sha256)
    return table


@pytest.fixture(scope="module")
def official_lines(scan_dir):
    def read(relative_path: str) -> list[tuple[str, str]]:
        return make_orders.read_official_lines(scan_dir / relative_path)

    return read


@pytest.fixture(scope="module")
def tfds_data_dir(tmp_path_factory) -> str:
    data_dir = tmp_path_factory.mktemp("tensorflow_datasets")
    for name in BUILT_CONFIGS:
        tfds_scan.OfflineScan(config=name, data_dir=str(data_dir)).download_and_prepare()
    return str(data_dir)


def fingerprint(examples: list[tuple[str, str]]) -> tuple[int, int, str]:
    lines = [f"IN: {command} OUT: {actions}" for command, actions in examples]
    unique = sorted({line.encode("utf-8") for line in lines})
    return len(lines), len(unique), hashlib.sha256(b"\n".join(unique)).hexdigest()


def dataset_pairs(dataset: tf.data.Dataset) -> list[tuple[str, str]]:
    pairs = []
    for batch in dataset.batch(8192).as_numpy_iterator():
        pairs.extend(
            (command.decode("utf-8"), actions.decode("utf-8"))
            for command, actions in zip(batch["commands"], batch["actions"])
        )
    return pairs


# Grammar


def test_grammar_generates_20910_distinct_commands():
    commands = grammar.all_commands()
    assert len(commands) == len(set(commands)) == grammar.NUM_COMMANDS == 20_910
    assert grammar.all_actions()[commands.index("jump")] == "I_JUMP"


def test_interpret_agrees_with_every_line_of_tasks_txt(official_lines):
    official = official_lines("tasks.txt")
    assert {command for command, _ in official} == set(grammar.all_commands())
    assert [grammar.interpret(command) for command, _ in official] == [
        actions for _, actions in official
    ]


@pytest.mark.parametrize(
    "command, actions",
    [
        ("turn left", "I_TURN_LEFT"),
        ("walk left", "I_TURN_LEFT I_WALK"),
        ("walk opposite left", "I_TURN_LEFT I_TURN_LEFT I_WALK"),
        ("walk around left", " ".join(["I_TURN_LEFT I_WALK"] * 4)),
        ("turn opposite right", "I_TURN_RIGHT I_TURN_RIGHT"),
        ("turn around left", " ".join(["I_TURN_LEFT"] * 4)),
        ("jump thrice", "I_JUMP I_JUMP I_JUMP"),
        ("look and run twice", "I_LOOK I_RUN I_RUN"),
        ("look after run twice", "I_RUN I_RUN I_LOOK"),
    ],
)
def test_interpret_semantics(command, actions):
    assert tfds_scan.interpret(command) == actions


@pytest.mark.parametrize(
    "command, offending_word",
    [
        ("walk quickly", "quickly"),
        ("walk left left", "left"),
        ("walk twice twice", "twice"),
        ("walk and run and look", "and"),
        ("left walk", "left"),
        ("turn", "turn"),
        ("walk and", "and"),
    ],
)
def test_interpret_rejects_non_commands_naming_the_word(command, offending_word):
    with pytest.raises(ValueError, match=f"'{offending_word}'"):
        tfds_scan.interpret(command)


def test_interpret_rejects_empty_string():
    with pytest.raises(ValueError):
        tfds_scan.interpret("   ")


# Shipped data


def test_shipped_orders_are_compact_and_reproducible(scan_dir):
    shipped = Path(splits.__file__).parent / "data" / "scan_orders.npz"
    assert shipped.stat().st_size < 200_000
    regenerated = make_orders.build_arrays(scan_dir)
    with np.load(shipped, allow_pickle=False) as stored:
        assert sorted(stored.files) == sorted(regenerated)
        for key, array in regenerated.items():
            np.testing.assert_array_equal(stored[key], array)


# Splits against the official files


@pytest.mark.parametrize("config_name", splits.OFFICIAL_CONFIG_NAMES)
def test_split_matches_official_fingerprint(config_name, fingerprints):
    examples = tfds_scan.split_examples(config_name)
    for split in ("train", "test"):
        official_file = splits.OFFICIAL_FILES[config_name][split]
        assert fingerprint(examples[split]) == fingerprints[official_file], official_file


def test_every_official_non_fewshot_file_has_a_config(fingerprints):
    covered = {path for files in splits.OFFICIAL_FILES.values() for path in files.values()}
    official = {
        path for path in fingerprints if "few_shot" not in path and path != "tasks.txt"
    }
    assert covered == official


def test_simple_splits_follow_official_order(official_lines):
    official_train = official_lines("simple_split/tasks_train_simple.txt")
    official_test = official_lines("simple_split/tasks_test_simple.txt")
    simple = tfds_scan.split_examples("simple")
    assert simple["train"] == official_train
    assert simple["test"] == official_test
    simple_order = official_train + official_test
    for percent in splits.SIZE_PERCENTAGES:
        train_size = 20_910 * percent // 100
        examples = tfds_scan.split_examples(f"simple_p{percent}")
        assert examples["train"] == simple_order[:train_size]
        assert examples["test"] == simple_order[train_size:]


@pytest.mark.parametrize("config_name", DETERMINISTIC_CONFIGS)
def test_deterministic_splits_follow_tasks_txt_order(config_name, official_lines):
    position = {command: i for i, (command, _) in enumerate(official_lines("tasks.txt"))}
    examples = tfds_scan.split_examples(config_name)
    repeated = {
        command for command, count in collections.Counter(examples["train"]).items() if count > 1
    }
    for split in ("train", "test"):
        positions = [position[c] for c, a in examples[split] if (c, a) not in repeated]
        assert positions == sorted(positions)


def test_length_dev_split_has_the_length_splits_shape_inside_its_training_data():
    length = tfds_scan.split_examples("length")
    dev = tfds_scan.split_examples("length_dev")
    n_actions = lambda pairs: [len(actions.split()) for _, actions in pairs]  # noqa: E731
    assert max(n_actions(dev["train"])) == 16
    assert set(n_actions(dev["test"])) == {18, 19, 20, 21, 22}
    # Every length training command whose output is not 17 actions long, in file order.
    kept = [pair for pair in length["train"] if len(pair[1].split()) != 17]
    test = set(dev["test"])
    assert [p for p in kept if p not in test] == dev["train"]
    assert [p for p in kept if p in test] == dev["test"]
    assert (len(dev["train"]), len(dev["test"])) == (14_142, 2_336)
    assert not set(length["test"]) & (set(dev["train"]) | set(dev["test"]))


def test_length_dev_unseen_clause_leaves_a_clause_unseen_as_the_length_split_does():
    length = tfds_scan.split_examples("length")
    dev = tfds_scan.split_examples("length_dev_unseen_clause")
    n_actions = lambda pairs: [len(actions.split()) for _, actions in pairs]  # noqa: E731
    assert max(n_actions(dev["train"])) == 15
    assert set(n_actions(dev["test"])) == set(range(17, 23))
    kept = [pair for pair in length["train"] if len(pair[1].split()) != 16]
    assert [p for p in kept if len(p[1].split()) <= 15] == dev["train"]
    assert [p for p in kept if len(p[1].split()) >= 17] == dev["test"]
    # `V around D twice` (16 actions) is in no training command and in most test ones.
    def clauses(command):
        return command.replace(" after ", " and ").split(" and ")
    seen = {clause for command, _ in dev["train"] for clause in clauses(command)}
    unseen = [c for c, _ in dev["test"] if not set(clauses(c)) <= seen]
    assert "jump around left twice" not in seen and "turn around left twice" in seen
    assert 0.7 < len(unseen) / len(dev["test"]) < 0.8
    assert not set(length["test"]) & (set(dev["train"]) | set(dev["test"]))


def test_length_dev_opposite_thrice_holds_out_a_clause_as_the_length_split_does():
    length = tfds_scan.split_examples("length")
    dev = tfds_scan.split_examples("length_dev_opposite_thrice")
    held_out = {f"{v} opposite {d} thrice" for v in ("jump", "look", "run", "walk")
                for d in ("left", "right")}
    def clauses(command):
        return set(command.replace(" after ", " and ").split(" and "))
    # The length training file, split by the clause, in file order.
    assert [p for p in length["train"] if not clauses(p[0]) & held_out] == dev["train"]
    assert [p for p in length["train"] if clauses(p[0]) & held_out] == dev["test"]
    assert (len(dev["train"]), len(dev["test"])) == (14_358, 2_632)
    # As `V around D` on the official split: seen alone and under `twice`, and `turn ...
    # thrice` seen, but never `V opposite D thrice`.
    seen = set().union(*(clauses(c) for c, _ in dev["train"]))
    assert not held_out & seen
    assert {"jump opposite left", "jump opposite left twice", "turn opposite left thrice"} <= seen
    assert not set(length["test"]) & (set(dev["train"]) | set(dev["test"]))


def test_length_dev_opposite_thrice_longer_also_tests_longer_commands_than_it_trains_on():
    wide = tfds_scan.split_examples("length_dev_opposite_thrice")
    dev = tfds_scan.split_examples("length_dev_opposite_thrice_longer")

    def size(pair):
        return len(pair[1].split())
    # length_dev_opposite_thrice cut at 16 actions, in file order.
    assert [p for p in wide["train"] if size(p) <= 16] == dev["train"]
    assert [p for p in wide["test"] if size(p) > 16] == dev["test"]
    assert (len(dev["train"]), len(dev["test"])) == (12_022, 512)
    assert max(map(size, dev["train"])) == 16
    # `V opposite D thrice` (9 actions) with an 8-action clause (`V around D`, `turn around D
    # twice`), with another `V opposite D thrice`, or with `turn around D thrice` (12).
    assert collections.Counter(map(size, dev["test"])) == {17: 320, 18: 128, 21: 64}


def test_around_right_dev_holds_out_opposite_left_as_around_right_holds_out_around_right():
    around_right = tfds_scan.split_examples("template_around_right")
    dev = tfds_scan.split_examples("around_right_dev_opposite_left")
    verbs = ("jump", "look", "run", "walk")

    def has(command, phrase):
        return f" {phrase} " in f" {command} "

    def holds(command):
        return any(has(command, f"{verb} opposite left") for verb in verbs)
    # The around-right training file split by the phrase, in file order, `turn opposite left`
    # in neither side.
    kept = [p for p in around_right["train"] if not has(p[0], "turn opposite left")]
    assert [p for p in kept if not holds(p[0])] == dev["train"]
    assert [p for p in kept if holds(p[0])] == dev["test"]
    assert (len(dev["train"]), len(dev["test"]), len(around_right["train"])) == (
        10_440, 3_756, 15_225)
    # The official split's shape: the modifier seen with one direction only, the direction
    # bare and under the other modifier.
    train_commands = [c for c, _ in dev["train"]]
    assert not any(has(c, "opposite left") or has(c, "around right") for c in train_commands)
    assert {"jump opposite right", "jump left", "jump around left"} <= set(train_commands)
    assert not set(around_right["test"]) & (set(dev["train"]) | set(dev["test"]))


@pytest.mark.parametrize("config_name", [n for n in splits.DEV_CONFIG_NAMES
                                         if n.startswith("addjump_dev_")])
def test_addjump_dev_split_holds_out_its_phrase_as_add_jump_holds_out_jump(config_name):
    phrase = config_name[len("addjump_dev_"):].replace("_", " ")
    add_jump = tfds_scan.split_examples("addprim_jump")
    dev = tfds_scan.split_examples(config_name)
    counts = collections.Counter(command for command, _ in dev["train"])
    # The phrase only bare, repeated like bare jump, whose copies stay.
    assert counts[phrase] == counts["jump"] == splits.NUM_ADDPRIM_JUMP_REPEATS
    assert not any(f" {phrase} " in f" {c} " for c in counts if c != phrase)
    assert {c for c, n in counts.items() if n > 1} == {phrase, "jump"}
    # The test side: every other add-jump training command with the phrase, once each.
    test_commands = [command for command, _ in dev["test"]]
    assert len(test_commands) == len(set(test_commands)) > 0
    assert all(f" {phrase} " in f" {c} " and c != phrase for c in test_commands)
    add_jump_train = {command for command, _ in add_jump["train"]}
    assert set(counts) | set(test_commands) == add_jump_train
    assert not set(test_commands) & set(counts)
    # Built from training data only: no add-jump test pair on either side.
    add_jump_test = set(add_jump["test"])
    assert not add_jump_test & (set(dev["train"]) | set(dev["test"]))
    # The sizes docs/dev_splits.md gives.
    assert (len(dev["train"]), len(counts), len(test_commands)) == {
        "run": (10_194, 7_262, 5_942), "walk": (10_194, 7_262, 5_942),
        "look": (10_194, 7_262, 5_942), "turn right": (15_180, 12_248, 956)}[phrase]
    # The copies are spread through train: a tenth of the lines holds about a tenth of them.
    tenth = dev["train"][: len(dev["train"]) // 10]
    assert abs(sum(command == phrase for command, _ in tenth)
               - splits.NUM_ADDPRIM_JUMP_REPEATS / 10) <= 2


def test_additional_examples_splits_use_official_choices(scan_dir):
    choices = json.loads(
        (scan_dir / "addprim_jump_additional_examples.json").read_text(encoding="utf-8")
    )
    addprim = tfds_scan.split_examples("addprim_jump")
    base_train = [pair for pair in addprim["train"] if pair[0] != "jump"]
    for key, chosen in choices.items():
        count = int(key[len("num") :].split("_rep")[0])
        examples = tfds_scan.split_examples(f"addprim_jump_{key}")
        train_counts = collections.Counter(command for command, _ in examples["train"])
        expected_repeats = round(1467 / (count + 1))
        assert [train_counts[c] for c in ["jump"] + chosen] == [expected_repeats] * (count + 1)
        assert [p for p in examples["train"] if p[0] not in {"jump", *chosen}] == base_train
        assert examples["test"] == [p for p in addprim["test"] if p[0] not in chosen]


def test_repeated_primitive_is_spread_evenly_through_train():
    train = tfds_scan.split_examples("addprim_jump")["train"]
    jump_lines = [line for line, (command, _) in enumerate(train) if command == "jump"]
    assert len(jump_lines) == 1467
    gaps = np.diff(jump_lines)
    assert gaps.min() >= 9 and gaps.max() <= 11  # 13,203 other lines / 1,467 copies = 9


# Validation carve (pure Python)


def test_validation_and_fit_partition_train_lines():
    train = tfds_scan.load_examples("addprim_jump", "train")
    validation_lines = splits.split_line_indices(len(train), "validation")
    fit_lines = splits.split_line_indices(len(train), "fit")
    assert len(validation_lines) == round(0.1 * len(train))
    assert not set(validation_lines) & set(fit_lines)
    assert sorted(validation_lines + fit_lines) == list(range(len(train)))
    validation = tfds_scan.load_examples("addprim_jump", "validation")
    fit = tfds_scan.load_examples("addprim_jump", "fit")
    assert validation == [train[line] for line in validation_lines]
    assert collections.Counter(validation + fit) == collections.Counter(train)


def test_validation_carve_depends_only_on_seed_and_fraction():
    first = tfds_scan.load_examples("length", "validation", validation_seed=3)
    assert first == tfds_scan.load_examples("length", "validation", validation_seed=3)
    assert first != tfds_scan.load_examples("length", "validation", validation_seed=4)
    larger = tfds_scan.load_examples("length", "validation", validation_fraction=0.25)
    assert len(larger) == round(0.25 * 16_990)


def test_tail_carve_validates_on_the_last_lines_of_the_official_file():
    train = tfds_scan.load_examples("addprim_jump", "train")
    tail = {"validation_fraction": 0.2, "validation_carve": "tail"}
    validation = tfds_scan.load_examples("addprim_jump", "validation", **tail)
    fit = tfds_scan.load_examples("addprim_jump", "fit", **tail)
    assert validation == train[-2934:] and fit == train[:-2934]
    assert tfds_scan.load_examples("addprim_jump", "validation", validation_seed=5, **tail) == (
        validation
    )
    # Why the carve matters on add-jump: the fit set keeps two of the three bare non-jump verbs.
    bare = {command for command, _ in fit if " " not in command}
    assert bare == {"jump", "look", "run"}


# TFDS builder


def test_builder_metadata():
    assert tfds_scan.OfflineScan.name == "offline_scan"
    assert str(tfds_scan.OfflineScan.VERSION) == "1.6.0"
    assert {"1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "1.5.0", "1.6.0"} <= set(
        tfds_scan.OfflineScan.RELEASE_NOTES)
    assert tuple(c.name for c in tfds_scan.OfflineScan.BUILDER_CONFIGS) == (
        tfds_scan.CONFIG_NAMES
    )


def test_registration_does_not_shadow_upstream_scan(tmp_path):
    assert tfds.builder_cls("offline_scan") is tfds_scan.OfflineScan
    upstream = tfds.builder_cls("scan")
    assert upstream is not tfds_scan.OfflineScan
    assert upstream.__module__.startswith("tensorflow_datasets.")
    assert type(tfds.builder("scan", data_dir=str(tmp_path))) is upstream


@pytest.mark.parametrize("config_name", BUILT_CONFIGS)
def test_built_dataset_equals_split_examples(config_name, tfds_data_dir):
    builder = tfds_scan.OfflineScan(config=config_name, data_dir=tfds_data_dir)
    assert builder.info.supervised_keys == ("commands", "actions")
    assert set(builder.info.features.keys()) == {"commands", "actions"}
    expected = tfds_scan.split_examples(config_name)
    for split in ("train", "test"):
        dataset = builder.as_dataset(split=split, shuffle_files=False)
        assert dataset_pairs(dataset) == expected[split]
    if config_name == "addprim_jump":
        assert builder.info.splits["train"].num_examples == 14_670


def test_load_splits_equal_load_examples(tfds_data_dir):
    loaded = {
        split: tfds_scan.load("addprim_jump", split, data_dir=tfds_data_dir)
        for split in tfds_scan.SPLIT_NAMES
    }
    string_scalar = tf.TensorSpec(shape=(), dtype=tf.string)
    for split, dataset in loaded.items():
        assert dataset.element_spec == {"commands": string_scalar, "actions": string_scalar}
        assert dataset_pairs(dataset) == tfds_scan.load_examples("addprim_jump", split), split
    train = dataset_pairs(loaded["train"])
    assert sum(command == "jump" for command, _ in train) == 1467
    reseeded = tfds_scan.load(
        "addprim_jump", "validation", validation_seed=7, data_dir=tfds_data_dir
    )
    assert dataset_pairs(reseeded) == tfds_scan.load_examples(
        "addprim_jump", "validation", validation_seed=7
    )



def test_load_pairs_equal_load_examples_from_one_read_of_train(tmp_path, monkeypatch):
    from tfds_scan import loader

    reads = []
    real_load = loader.load
    monkeypatch.setattr(loader, "load", lambda name, split, **kw: (
        reads.append((name, split)), real_load(name, split, **kw))[1])
    for carve in ({}, {"validation_carve": "tail", "validation_fraction": 0.2},
                  {"validation_seed": 5}):
        for split in ("train", "fit", "validation", "test"):
            pairs = tfds_scan.load_pairs("simple_p1", split, data_dir=tmp_path, **carve)
            assert pairs == tfds_scan.load_examples("simple_p1", split, **carve), (split, carve)
    # Each official split was read once; fit and validation are lines of the train read.
    assert sorted(reads) == [("simple_p1", "test"), ("simple_p1", "train")]
    # What a caller gets is its own list: changing it changes no later answer.
    pairs = tfds_scan.load_pairs("simple_p1", "train", data_dir=tmp_path)
    pairs.clear()
    assert tfds_scan.load_pairs("simple_p1", "train", data_dir=tmp_path)
    # Another data directory is another dataset, read from its own files.
    tfds_scan.load_pairs("simple_p1", "train", data_dir=tmp_path / "other")
    assert reads[-1] == ("simple_p1", "train") and len(reads) == 3

def test_load_uses_data_dir_from_environment(tfds_data_dir, monkeypatch):
    monkeypatch.setenv("COMPGEN_TF_DATA_DIR", tfds_data_dir)
    assert str(tfds_scan.default_data_dir()) == tfds_data_dir
    test = tfds_scan.load("template_jump_around_right", "test")
    assert dataset_pairs(test) == tfds_scan.split_examples("template_jump_around_right")["test"]
    monkeypatch.delenv("COMPGEN_TF_DATA_DIR")
    assert tfds_scan.default_data_dir() == (
        Path.home() / ".cache" / "compgen_tf" / "tensorflow_datasets"
    )


# Bad arguments


@pytest.mark.parametrize("loader", [tfds_scan.load, tfds_scan.load_examples])
def test_unknown_config_or_split_is_rejected_with_valid_names(loader, tmp_path):
    with pytest.raises(ValueError, match="addprim_jump_num1_rep1"):
        loader("scan_simple", "train", **_data_dir_kwargs(loader, tmp_path))
    with pytest.raises(ValueError, match="validation"):
        loader("simple", "dev", **_data_dir_kwargs(loader, tmp_path))
    with pytest.raises(ValueError, match="simple"):
        tfds_scan.split_examples("mcd1")


@pytest.mark.parametrize("fraction", [0, 1, -0.1, 1.5, True, "0.1", float("nan")])
@pytest.mark.parametrize("loader", [tfds_scan.load, tfds_scan.load_examples])
def test_bad_validation_fraction_is_rejected(loader, fraction, tmp_path):
    with pytest.raises(ValueError, match="validation_fraction"):
        loader(
            "simple",
            "validation",
            validation_fraction=fraction,
            **_data_dir_kwargs(loader, tmp_path),
        )


@pytest.mark.parametrize("loader", [tfds_scan.load, tfds_scan.load_examples])
def test_unknown_validation_carve_is_rejected(loader, tmp_path):
    with pytest.raises(ValueError, match="Unknown validation_carve 'last'; valid carves: random, tail"):
        loader("simple", "validation", validation_carve="last", **_data_dir_kwargs(loader, tmp_path))


def test_carve_that_empties_a_side_is_rejected():
    with pytest.raises(ValueError, match="non-empty"):
        tfds_scan.load_examples("simple_p1", "validation", validation_fraction=0.001)


def _data_dir_kwargs(loader, tmp_path) -> dict:
    # The builds must never start: arguments are checked first.
    return {"data_dir": str(tmp_path / "never_built")} if loader is tfds_scan.load else {}


def test_concurrent_first_loads_build_once_and_agree(tmp_path):
    """Parallel seeds and workers read SCAN through the TFDS builder at once: the first
    build is locked, and every process reads the same pairs as the grammar generates."""
    import subprocess
    import sys

    code = ("import json, sys, tfds_scan; "
            "print(json.dumps(tfds_scan.load_pairs('simple_p1', 'fit', data_dir=sys.argv[1])))")
    processes = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
    outputs = [p.communicate(timeout=300) for p in processes]
    assert all(p.returncode == 0 for p in processes), [err[-2000:] for _, err in outputs]
    expected = [list(pair) for pair in tfds_scan.load_examples("simple_p1", "fit")]
    for out, _ in outputs:
        assert json.loads(out.strip().splitlines()[-1]) == expected
