"""Your own data: a folder of TSV files through `tfds_scan.folder_pairs` and `train --split`."""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tfds_scan
from compgen_tf import registry
from compgen_tf.cli import common, train
from compgen_tf.errors import ConfigError
from compgen_tf.experiments.reproduce import Reproduction
from compgen_tf.experiments.scan import SCAN

ROOT = Path(__file__).resolve().parents[1]
TRAIN = [("walk", "WALK", "lex"), ("walk twice", "WALK WALK", "struct"),
         ("jump", "JUMP", "lex"), ("run", "RUN", "lex"), ("run twice", "RUN RUN", "struct"),
         ("look", "LOOK", "lex"), ("look twice", "LOOK LOOK", "struct"),
         ("jump twice", "JUMP JUMP", "struct"), ("walk thrice", "WALK WALK WALK", "x"),
         ("run thrice", "RUN RUN RUN", "x")]


def write(folder: Path, name: str, rows, columns: int = 3) -> Path:
    """`rows` as a TSV file `folder/name` with their first `columns` columns."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("".join("\t".join(row[:columns]) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A TFDS data directory of this test's own (where the CLI builds too)."""
    out = tmp_path / "tfds"
    monkeypatch.setenv("COMPGEN_TF_DATA_DIR", str(out))
    return out


def test_a_folder_without_dev_carves_validation_from_train_with_categories(tmp_path,
                                                                            data_dir):
    folder = tmp_path / "mine"
    write(folder, "train.tsv", TRAIN)
    write(folder, "test.tsv", [("jump thrice", "JUMP JUMP JUMP")], columns=2)
    write(folder, "gen.tsv", [("look thrice", "LOOK LOOK LOOK", "deep")])
    carve = {"validation_fraction": 0.2, "validation_seed": 3, "data_dir": data_dir}
    pairs = [(s, t) for s, t, _ in TRAIN]
    assert tfds_scan.load_pairs(folder, "train", data_dir=data_dir) == pairs
    lines = tfds_scan.split_line_indices(len(TRAIN), "validation", validation_fraction=0.2,
                                         validation_seed=3)
    assert tfds_scan.load_pairs(str(folder), "validation", **carve) == [pairs[i] for i in lines]
    assert tfds_scan.load_categories(folder, "validation", **carve) == tuple(
        TRAIN[i][2] for i in lines)
    fit = tfds_scan.load_pairs(folder, "fit", **carve)
    assert len(fit) == len(TRAIN) - len(lines) and set(fit) | {pairs[i] for i in lines} == set(
        pairs)
    assert tfds_scan.load_pairs(folder, "test", data_dir=data_dir) == [("jump thrice",
                                                                         "JUMP JUMP JUMP")]
    assert tfds_scan.load_categories(folder, "test", data_dir=data_dir) is None
    assert tfds_scan.load_categories(folder, "gen", data_dir=data_dir) == ("deep",)
    # tf.data, as for the built-in sets: the same rows, with the category feature.
    examples = list(tfds_scan.load(folder, "validation", **carve).as_numpy_iterator())
    assert [(e["source"].decode(), e["target"].decode(), e["category"].decode())
            for e in examples] == [TRAIN[i] for i in lines]
    assert tfds_scan.load_categories("simple", "test") is None
    with pytest.raises(ValueError, match=r"has no dev.tsv; its splits: train, validation, "
                                         r"fit, test, gen\."):
        tfds_scan.load_pairs(folder, "dev", data_dir=data_dir)


def test_a_folder_with_dev_validates_on_it_and_fits_on_all_of_train(tmp_path, data_dir):
    folder = tmp_path / "with_dev"
    write(folder, "train.tsv", TRAIN, columns=2)
    # Runs of whitespace are one space; a Windows line end is a line end.
    (folder / "dev.tsv").write_text("jump  thrice \tJUMP  JUMP JUMP\r\n", encoding="utf-8")
    (folder / "README.md").write_text("other files are ignored\n")
    assert tfds_scan.load_pairs(folder, "validation", data_dir=data_dir) == [
        ("jump thrice", "JUMP JUMP JUMP")]
    assert tfds_scan.load_pairs(folder, "fit", data_dir=data_dir) == [(s, t) for s, t, _ in
                                                                       TRAIN]
    assert tfds_scan.load_categories(folder, "train", data_dir=data_dir) is None


def test_a_changed_file_is_rebuilt_and_an_unchanged_folder_is_not(tmp_path, data_dir,
                                                                  monkeypatch):
    folder = tmp_path / "changing"
    write(folder, "train.tsv", TRAIN[:4])
    builds = []
    original = tfds_scan.folder_pairs.FolderPairs._split_generators
    monkeypatch.setattr(tfds_scan.folder_pairs.FolderPairs, "_split_generators",
                        lambda self, dl: builds.append(1) or original(self, dl))
    assert len(tfds_scan.load_pairs(folder, "train", data_dir=data_dir)) == 4
    moved = tmp_path / "elsewhere" / "same"
    moved.mkdir(parents=True)
    (moved / "train.tsv").write_bytes((folder / "train.tsv").read_bytes())
    assert len(tfds_scan.load_pairs(moved, "train", data_dir=data_dir)) == 4
    assert builds == [1]  # the same contents: built once, wherever they lie
    write(folder, "train.tsv", TRAIN[:5])
    assert tfds_scan.load_pairs(folder, "train", data_dir=data_dir)[-1] == TRAIN[4][:2]
    assert builds == [1, 1]
    configs = sorted(p.name for p in (data_dir / "folder_pairs").iterdir())
    sha256 = tfds_scan.folder_pairs.content_sha256(folder)
    assert len(configs) == 2 and f"sha256_{sha256[:24]}" in configs


def _bad(folder: Path):
    """The bad folders: (name, make it, the one line that names what is wrong)."""
    def rows(name, text: bytes):
        def make():
            write(folder, "train.tsv", TRAIN)
            (folder / name).write_bytes(text)
        return make

    path = str(folder.resolve())
    return [
        ("missing folder", lambda: None, f"data folder {path} does not exist"),
        ("missing train", lambda: write(folder, "test.tsv", TRAIN),
         f"{path}/train.tsv: no such file (a data folder holds train.tsv and any of dev.tsv, "
         f"test.tsv, gen.tsv)"),
        ("one column", rows("test.tsv", b"walk\tWALK\njump JUMP\n"),
         f"{path}/test.tsv:2: 1 tab-separated column(s); expected "
         f"source<TAB>target[<TAB>category]"),
        ("four columns", rows("dev.tsv", b"a\tb\tc\td\n"),
         f"{path}/dev.tsv:1: 4 tab-separated column(s); expected "
         f"source<TAB>target[<TAB>category]"),
        ("mixed columns", rows("gen.tsv", b"walk\tWALK\njump\tJUMP\tlex\n"),
         f"{path}/gen.tsv:2: 3 columns, but line 1 has 2"),
        ("empty line", rows("test.tsv", b"walk\tWALK\n\njump\tJUMP\n"),
         f"{path}/test.tsv:2: empty line"),
        ("empty source", rows("test.tsv", b"walk\tWALK\n \tJUMP\n"),
         f"{path}/test.tsv:2: empty source"),
        ("empty target", rows("dev.tsv", b"walk\t\n"), f"{path}/dev.tsv:1: empty target"),
        ("not UTF-8", rows("test.tsv", b"walk\tWALK\nj\xffump\tJUMP\n"),
         f"{path}/test.tsv:2: not UTF-8 (byte 0xff)"),
        ("empty file", rows("test.tsv", b""), f"{path}/test.tsv: no lines"),
        ("unknown file", rows("valid.tsv", b"walk\tWALK\n"),
         f"{path}/valid.tsv: not a file of a data folder (its files: train.tsv, dev.tsv, "
         f"test.tsv, gen.tsv); rename or move it"),
    ]


BAD_KINDS = [kind for kind, _, _ in _bad(Path("x"))]


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_bad_folder_is_a_folder_data_error_naming_the_file_and_line(kind, tmp_path,
                                                                       data_dir):
    folder = tmp_path / "bad"
    _, make, message = next(bad for bad in _bad(folder) if bad[0] == kind)
    make()
    with pytest.raises(tfds_scan.FolderDataError) as error:
        tfds_scan.load_pairs(folder, "train", data_dir=data_dir)
    assert str(error.value) == message
    assert not (data_dir / "folder_pairs").exists()  # refused before TFDS builds anything


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_train_on_a_bad_folder_is_its_one_line_and_exit_2(kind, tmp_path, data_dir, capsys):
    folder = tmp_path / "bad"
    _, make, message = next(bad for bad in _bad(folder) if bad[0] == kind)
    make()
    assert train.main(["--model", "seq2seq", "--split", str(folder), "--steps", "1",
                       "--output", str(tmp_path / "run")]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"error: {message}\n" and captured.out == ""
    assert not (tmp_path / "run").exists()


def test_evaluate_splits_of_a_missing_folder_is_its_one_line(tmp_path, capsys):
    folder = tmp_path / "absent"
    assert train.main(["--model", "seq2seq", "--split", str(folder), "--evaluate-splits",
                       "gen", "--output", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err == f"error: data folder {folder} does not exist\n"


def test_split_values_with_a_separator_or_naming_a_directory_are_folders(tmp_path,
                                                                         monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "simple").mkdir()  # a built-in name stays the built-in split
    check = common.name_or_folder("split", train.names.SPLITS)
    for value, is_folder in (("mine", True), ("./absent", True), ("a/b", True),
                             (str(tmp_path), True), ("simple", False), ("length", False)):
        assert check(value) == value
        # The command line's rule is tfds_scan's.
        assert tfds_scan.folder_pairs.is_folder(value) is is_folder, value
    with pytest.raises(argparse.ArgumentTypeError, match=r"unknown split 'absent'"):
        check("absent")
    with pytest.raises(SystemExit):
        train.build_parser().parse_args(["--split", "simpel"])


def test_folder_runs_are_named_after_the_folder_and_refuse_scan_only_models(tmp_path):
    folder = tmp_path / "nested" / "my_set"
    write(folder, "train.tsv", TRAIN)
    assert SCAN.run_name(str(folder)) == "my_set" and SCAN.run_name("simple") == "simple"
    request = Reproduction(model="seq2seq", task=str(folder) + "/")
    assert request.run_name == "my_set"
    assert request.run_dir(1) == Path("runs") / "seq2seq" / "my_set" / "seed1"
    with pytest.raises(ConfigError, match="trains on SCAN's words only"):
        SCAN.resolve_config("equivariant_seq2seq", str(folder))
    assert set(registry.FOLDER_MODELS) <= set(registry.SCAN_MODELS)


def test_a_folder_run_config_records_path_and_hash_and_fits_its_lengths(tmp_path, data_dir):
    folder = tmp_path / "long"
    write(folder, "train.tsv", TRAIN)
    long_target = " ".join(["WALK"] * 80)
    write(folder, "gen.tsv", [(" ".join(["walk"] * 40), long_target, "long")])
    config = SCAN.resolve_config("seq2seq", str(folder))
    record = config.to_json()
    assert record["split"] == str(folder.resolve())
    assert record["data"]["folder_sha256"] == tfds_scan.folder_pairs.content_sha256(folder)
    assert record["model_args"]["command_grammar"] is None
    assert (record["model_args"]["max_input_length"], record["model_args"]["max_output_length"]
            ) == (40, 81)
    assert SCAN.evaluated_parts(config) == ("train", "validation", "gen")
    assert SCAN.test_parts(config) == ("gen",)
    assert SCAN.run_config(record).to_json() == record  # read back: the same configuration
    write(folder, "gen.tsv", [("walk", "WALK", "short")])
    with pytest.raises(ConfigError, match=r"data folder .*long has changed since this "
                                          r"configuration was recorded"):
        SCAN.run_config(record, origin="run/config.json")


def test_train_on_a_folder_end_to_end(tmp_path):
    """`python -m compgen_tf train --model seq2seq --split FOLDER` trains, scores train,
    validation (dev.tsv), test and gen, and keeps an unknown test word as a scored row."""
    folder = tmp_path / "toy"
    write(folder, "train.tsv", TRAIN)
    write(folder, "dev.tsv", TRAIN[:3])
    write(folder, "test.tsv", [("jump thrice", "JUMP JUMP JUMP", "x")])
    write(folder, "gen.tsv", [("fly twice", "FLY FLY", "new word")])
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    env["COMPGEN_TF_DATA_DIR"] = str(tmp_path / "tfds")
    result = subprocess.run(
        [sys.executable, "-m", "compgen_tf", "train", "--model", "seq2seq", "--split",
         str(folder), "--steps", "2", "--set", "training.eval_every=2", "--set",
         "training.checkpoint_every=2", "--set", "model_args.hidden_units=8", "--set",
         "model_args.embedding_dim=8", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "runs" / "seq2seq" / "toy" / "seed0"
    assert "run runs/seq2seq/toy/seed0: test exact match" in result.stdout
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert set(metrics["accuracy"]) == {"train", "validation", "test", "gen"}
    config = json.loads((run_dir / "config.json").read_text())
    assert config["split"] == str(folder.resolve())
    assert config["data"]["folder_sha256"] == tfds_scan.folder_pairs.content_sha256(folder)
    errors = [json.loads(line) for line in (run_dir / "errors_gen.jsonl").read_text().splitlines()]
    assert [e["command"] for e in errors] == ["fly twice"]


def test_the_transformer_trains_on_a_folder_and_scores_its_parts(tmp_path, data_dir, capsys,
                                                                 monkeypatch):
    """The Transformer is one of `FOLDER_MODELS`: a folder run trains and scores every part,
    the folder's lengths raising the configuration's, no grammar check."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "toy"
    write(folder, "train.tsv", TRAIN)
    write(folder, "gen.tsv", [(" ".join(["walk"] * 40), " ".join(["WALK"] * 70), "long")])
    assert "transformer" in registry.FOLDER_MODELS
    assert train.main(["--model", "transformer", "--split", str(folder), "--steps", "2",
                       "--set", "training.eval_every=2", "--set", "training.checkpoint_every=2",
                       "--set", "model_args.width=8", "--set", "model_args.num_heads=2",
                       "--set", "model_args.feedforward_dim=8", "--set",
                       "model_args.num_layers=1", "--quiet"]) == 0
    run_dir = tmp_path / "runs" / "transformer" / "toy" / "seed0"
    config = json.loads((run_dir / "config.json").read_text())
    assert config["model_args"]["command_grammar"] is None
    assert (config["model_args"]["max_input_length"],
            config["model_args"]["max_output_length"]) == (40, 71)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert set(metrics["accuracy"]) == {"train", "validation", "gen"}
    assert metrics["accuracy_by_category"]["gen"]["categories"]["long"]["total"] == 1
