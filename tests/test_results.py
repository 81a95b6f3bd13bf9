import json
import shutil

import numpy as np
import pytest

from compgen_tf.cli.reproduce import main as reproduce
from compgen_tf.experiments.results import load_results, run_record, summarize, write_results


def test_summarize_statistics():
    summary = summarize([0.5, 1.0, 0.0, 1.0])
    assert summary == {"n": 4, "mean": 0.625, "median": 0.75,
                       "std": pytest.approx(0.4787135539), "min": 0.0, "max": 1.0}
    assert summarize([0.3])["std"] == 0.0
    with pytest.raises(ValueError):
        summarize([])


def test_write_results_schema(tmp_path):
    runs = [{"seed": 1, "val_accuracy": 1.0, "test_accuracy": 0.5, "wall_time_s": 3.0,
             "steps": 10},
            {"seed": 0, "val_accuracy": 1.0, "test_accuracy": 1.0, "wall_time_s": 2.0,
             "steps": 10}]
    path = write_results("m", "simple", "cmd", runs, {"keras": "3"}, results_dir=tmp_path)
    document = load_results(path)
    assert path == tmp_path / "m" / "simple.json"
    assert [r["seed"] for r in document["runs"]] == [0, 1]
    assert document["summary"]["mean"] == 0.75
    (tmp_path / "bad.json").write_text(json.dumps({"model": "m"}))
    with pytest.raises(ValueError, match="missing keys"):
        load_results(tmp_path / "bad.json")


def test_run_record_keeps_the_validation_curve_of_the_run_directory(tmp_path):
    metrics = {"seed": 3, "accuracy": {"validation": 0.9, "test": 0.8}, "wall_time_s": 5.0,
               "steps": 20, "best_step": 10}
    (tmp_path / "history.jsonl").write_text(
        '{"step": 10, "loss": 0.5, "val_accuracy": 0.9, "elapsed_s": 1.0}\n'
        '{"step": 20, "loss": 0.25, "val_accuracy": 0.8123456789, "elapsed_s": 2.0}\n'
        '{"step": 3')  # a line cut short by an interrupted run
    record = run_record(metrics, tmp_path)
    assert record == {"seed": 3, "val_accuracy": 0.9, "test_accuracy": 0.8, "wall_time_s": 5.0,
                      "steps": 20, "best_step": 10,
                      "validation_curve": [[10, 0.9], [20, 0.812346]],
                      "loss_curve": [[10, 0.5], [20, 0.25]]}
    # A translation run's history has validation BLEU too: its curve is kept beside.
    (tmp_path / "history.jsonl").write_text(
        '{"step": 10, "loss": 0.5, "val_accuracy": 0.0, "val_bleu": 3.25, "elapsed_s": 1.0}\n')
    assert run_record(metrics, tmp_path)["validation_bleu_curve"] == [[10, 3.25]]
    assert "validation_curve" not in run_record(metrics, tmp_path / "elsewhere")
    trained = dict(metrics, command="python -m compgen_tf.train --seed 3",
                   versions={"commit": "abc123"})
    assert {k: run_record(trained)[k] for k in ("command", "commit")} == {
        "command": "python -m compgen_tf.train --seed 3", "commit": "abc123"}
    assert "validation_curve" not in run_record(metrics)
    # A seed trained on JAX says so; one on TensorFlow (the default) records no backend.
    assert run_record(dict(metrics, backend="jax"))["backend"] == "jax"
    assert "backend" not in run_record(dict(metrics, backend="tensorflow"))


def test_results_of_the_same_configuration_gather_seeds_across_commands(tmp_path):
    def run(seed, accuracy):
        return {"seed": seed, "val_accuracy": 1.0, "test_accuracy": accuracy,
                "wall_time_s": 1.0, "steps": 10}

    config = {"training": {"max_steps": 10}}
    write_results("m", "simple", "first", [run(0, 0.5), run(1, 1.0)], {}, results_dir=tmp_path,
                  config=config)
    path = write_results("m", "simple", "second", [run(1, 0.0), run(2, 0.75)], {},
                         results_dir=tmp_path, config=config)
    document = load_results(path)
    assert [(r["seed"], r["test_accuracy"], r["command"]) for r in document["runs"]] == [
        (0, 0.5, "first"), (1, 0.0, "second"), (2, 0.75, "second")]
    assert document["command"] == "second"
    assert document["summary"]["n"] == 3 and document["summary"]["median"] == 0.5
    # A key written into the file by hand survives the next seed.
    path.write_text(json.dumps(dict(document, renamed="was other.json")))
    write_results("m", "simple", "fourth", [run(4, 1.0)], {}, results_dir=tmp_path,
                  config=config)
    assert load_results(path)["renamed"] == "was other.json"
    assert load_results(path)["summary"]["n"] == 4
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="another configuration"):
        write_results("m", "simple", "third", [run(3, 1.0)], {}, results_dir=tmp_path,
                      config={"training": {"max_steps": 20}})
    assert load_results(path)["summary"]["n"] == 3


TINY_SIZES = {
    "seq2seq": ["model_args.hidden_units=4", "model_args.embedding_dim=4"],
    "counting_seq2seq": ["model_args.hidden_units=4", "model_args.embedding_dim=4",
                         "training.length_head_steps=2"],
    # Without XLA: compiling each batch shape costs more than the few steps of a test.
    "equivariant_seq2seq": ["model_args.hidden_units=4", "model_args.embedding_dim=4",
                            "training.jit_compile=false"],
    "syntactic_attention": ["model_args.semantic_dim=4", "model_args.syntax_embedding_dim=4",
                            "model_args.syntax_units=4", "model_args.encoder_units=4"],
    "transformer": ["model_args.width=8", "model_args.num_layers=1", "model_args.num_heads=2",
                    "model_args.feedforward_dim=8"],
}


def test_every_registered_model_is_reproduced_below():
    from compgen_tf import registry

    assert set(TINY_SIZES) == set(registry.SCAN_MODELS)


# Every other model reproduces one seed in tests/test_every_model.py.
@pytest.mark.parametrize("model", ["seq2seq"])
def test_reproduce_trains_seeds_once_and_writes_results(model, tmp_path, capsys):
    overrides = TINY_SIZES[model] + ["training.eval_every=2", "model_args.max_output_length=8"]
    args = (["--model", model, "--split", "simple_p1", "--seeds", "2", "--steps", "4",
             "--runs-dir", str(tmp_path / "runs"), "--results-dir", str(tmp_path / "results"),
             "--quiet"] + [arg for override in overrides for arg in ("--set", override)])
    assert reproduce(args) == 0
    document = load_results(tmp_path / "results" / model / "simple_p1.json")
    assert [r["seed"] for r in document["runs"]] == [0, 1]
    assert all(r["steps"] == 4 and 0 <= r["test_accuracy"] <= 1 for r in document["runs"])
    assert document["summary"]["n"] == 2
    assert document["command"].startswith(f"python -m compgen_tf reproduce --model {model}")
    # Where the files went is this machine's business: the command runs from the repo root.
    assert "--runs-dir" not in document["command"]
    assert "--results-dir" not in document["command"]
    assert str(tmp_path) not in document["command"]
    assert document["config"]["training"]["max_steps"] == 4
    # Settings changed on the command line are not on record: the file says so.
    assert document["provenance"]["kind"] == "post-hoc"
    assert document["provenance"]["reason"].startswith("not recorded: ")
    assert "training.max_steps" in document["provenance"]["reason"]
    assert "provenance" not in document["config"]
    assert all([step for step, _ in r["validation_curve"]] == [2, 4] for r in document["runs"])
    # Each seed records what trained it, from its own run directory, and the commit.
    assert all(r["command"] == document["command"] for r in document["runs"])
    from compgen_tf.versions import source_commit

    commit = source_commit()
    if commit is not None:  # a git checkout, as in CI
        assert all(r["commit"] == commit for r in document["runs"])
    capsys.readouterr()
    assert reproduce(args) == 0
    assert capsys.readouterr().out.count("already finished") == 2
    # A finished seed of another configuration is refused, not recorded under this one.
    other = [a if a != str(tmp_path / "results") else str(tmp_path / "other") for a in args]
    assert reproduce(other + ["--set", "training.eval_every=4"]) == 2
    assert "different configuration" in capsys.readouterr().err
    assert not (tmp_path / "other" / model / "simple_p1.json").exists()


def test_concurrent_reproduce_commands_split_seeds_without_duplicates(tmp_path):
    """Two racing commands (one of them with two jobs) train every seed exactly once."""
    import os
    import subprocess
    import sys

    args = ["--model", "seq2seq", "--split", "simple_p1", "--seeds", "3", "--steps", "2",
            "--set", "training.eval_every=2", "--set", "model_args.hidden_units=4",
            "--set", "model_args.embedding_dim=4", "--set", "model_args.max_output_length=4",
            "--runs-dir", str(tmp_path / "runs"),
            "--results-dir", str(tmp_path / "results"), "--quiet"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    commands = [args + ["--jobs", "2"], args]
    processes = [subprocess.Popen([sys.executable, "-m", "compgen_tf", "reproduce", *command],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  env=env)
                 for command in commands]
    outputs = [process.communicate(timeout=600)[0] for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    printed = "".join(outputs)
    for seed in range(3):
        assert printed.count(f"seed {seed}: training") == 1, printed
    document = load_results(tmp_path / "results" / "seq2seq" / "simple_p1.json")
    assert [r["seed"] for r in document["runs"]] == [0, 1, 2]
    assert "--jobs" not in document["command"]
    for seed in range(3):
        history = (tmp_path / "runs" / "seq2seq" / "simple_p1" / f"seed{seed}" / "history.jsonl")
        assert [json.loads(line)["step"] for line in history.read_text().splitlines()] == [2]


def test_recorded_version_is_the_running_source_and_the_project_version():
    """Results carry `versions["compgen-tf"]`; it must be the version of the code that ran
    (an editable install's metadata keeps the version it was installed with)."""
    import re
    from pathlib import Path

    import compgen_tf
    from compgen_tf.versions import package_versions

    pyproject = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    declared = re.search(r'^version = "([^"]+)"', pyproject, re.MULTILINE).group(1)
    assert compgen_tf.__version__ == declared == "0.2.0"
    assert package_versions()["compgen-tf"] == declared


def test_recorded_commands_of_every_version_become_todays_reproduce_arguments():
    from compgen_tf.experiments.check import todays_arguments

    assert todays_arguments("python -m compgen_tf reproduce --model seq2seq --split simple "
                            "--seeds 3 --jobs 2 --quiet", "seq2seq") == [
        "--model", "seq2seq", "--split", "simple", "--quiet"]
    assert todays_arguments("python -m compgen_tf.reproduce --model seq2seq --split simple "
                            "--first-seed 5 --seeds 1", "seq2seq") == [
        "--model", "seq2seq", "--split", "simple"]
    # A continued seed is checked by training it straight through (the same run).
    assert todays_arguments("python -m compgen_tf reproduce --model seq2seq --split simple "
                            "--name long --continue-from short --seeds 1", "seq2seq") == [
        "--model", "seq2seq", "--split", "simple", "--name", "long"]
    assert todays_arguments("python -m compgen_tf.meta_training --task length --seeds 1 "
                            "--first-seed 2 --quiet", "meta_seq2seq") == [
        "--model", "meta_seq2seq", "--task", "length", "--quiet"]
    assert todays_arguments("python -m compgen_tf.toy_runs --model stack_lstm --task "
                            "palindromes --seeds 5 --quiet --variant full_budget --set "
                            "training.stop_at_accuracy=2", "stack_lstm") == [
        "--model", "stack_lstm", "--task", "palindromes", "--quiet", "--name",
        "palindromes_full_budget", "--set", "training.stop_at_accuracy=2"]
    assert todays_arguments("python -m compgen_tf.train --model seq2seq --split length_dev "
                            "--seed 0 --output /tmp/runs/seed0 --quiet --set "
                            "training.max_steps=10", "seq2seq") == [
        "--model", "seq2seq", "--split", "length_dev", "--quiet", "--set",
        "training.max_steps=10"]
    with pytest.raises(ValueError, match="chosen splits only"):
        todays_arguments("python -m compgen_tf.train --model seq2seq --evaluate-splits test",
                         "seq2seq")
    with pytest.raises(ValueError, match="not a command that trains seeds"):
        todays_arguments("python -m compgen_tf.models.rule_learning --seeds 5", "mlp_baseline")


def test_check_trains_a_recorded_seed_again_and_reports_the_difference(tmp_path, capsys):
    """`reproduce --check`: the seed's own recorded command, a run directory of its own, the
    recorded and new scores side by side (on one machine: equal)."""
    results = tmp_path / "results"
    assert reproduce(["--model", "symbol_convolution", "--task", "rule_learning", "--seeds",
                      "2", "--steps", "12", "--set", "training.eval_every=4",
                      "--runs-dir", str(tmp_path / "runs"), "--results-dir", str(results),
                      "--quiet"]) == 0
    path = results / "symbol_convolution" / "rule_learning.json"
    out = tmp_path / "check.json"
    capsys.readouterr()
    assert reproduce(["--check", str(path), "--seed", "1", "--runs-dir",
                      str(tmp_path / "check"), "--out", str(out), "--backend",
                      "tensorflow"]) == 0
    report = json.loads(out.read_text())
    # `--backend` goes on the command that trains the seed again, and both are on record.
    assert report["command"].endswith("--backend tensorflow")
    assert (report["backend"], report["recorded_backend"]) == ("tensorflow", "tensorflow")
    recorded = load_results(path)["runs"][1]
    assert report["recorded"] == {key: recorded[key] for key in (
        "val_accuracy", "test_accuracy", "steps", "best_step")}
    assert report["difference"] == {"val_accuracy": 0.0, "test_accuracy": 0.0, "steps": 0,
                                    "best_step": 0}
    assert report["configuration_changes"] == []
    assert report["provenance"] == {"kind": "check",
                                    "configuration": load_results(path)["provenance"]}
    assert (tmp_path / "check" / "symbol_convolution" / "rule_learning" / "seed1" /
            "metrics.json").exists()
    assert "--first-seed 1 --seeds 1" in report["command"]
    printed = capsys.readouterr().out
    assert "test_accuracy: recorded" in printed and "difference +0.000000" in printed
    # The same score is in band: inside the spread of the file's two seeds.
    runs = load_results(path)["runs"]
    assert report["band"] == [min(r["test_accuracy"] for r in runs),
                              max(r["test_accuracy"] for r in runs)]
    assert report["in_band"] is True and "in band: yes" in printed
    assert reproduce(["--check", str(path), "--seed", "7"]) == 2
    assert "has no seed 7" in capsys.readouterr().err
    # A second check into the same runs directory would read the first one's run: refused.
    assert reproduce(["--check", str(path), "--seed", "1", "--runs-dir",
                      str(tmp_path / "check")]) == 2
    assert "give the check another --runs-dir" in capsys.readouterr().err


def test_check_says_whether_the_new_test_accuracy_lands_in_band():
    """In band: within [min, max] of the test accuracies of all the file's seeds, ends
    included; a file of one seed is a band of one value."""
    from compgen_tf.experiments.check import band_verdict, report_lines

    document = {"runs": [{"seed": 0, "test_accuracy": 0.4}, {"seed": 1, "test_accuracy": 0.9},
                         {"seed": 2, "test_accuracy": 0.7}]}
    assert band_verdict(document, 0.55) == {"band": [0.4, 0.9], "band_seeds": 3,
                                            "in_band": True}
    assert band_verdict(document, 0.4)["in_band"] and band_verdict(document, 0.9)["in_band"]
    assert not band_verdict(document, 0.95)["in_band"]
    assert not band_verdict(document, 0.39)["in_band"]
    single = {"runs": [{"seed": 4, "test_accuracy": 0.5}]}
    assert band_verdict(single, 0.5)["in_band"] and not band_verdict(single, 0.5001)["in_band"]
    report = {"recorded": {"val_accuracy": 1.0, "test_accuracy": 0.7},
              "new": {"val_accuracy": 1.0, "test_accuracy": 0.95},
              "recorded_commit": "abc", "commit": "def", "configuration_changes": [],
              **band_verdict(document, 0.95)}
    lines = report_lines(report)
    assert lines[-1] == ("in band: no (test accuracy 0.95; the file's 3 seeds span 0.4 to "
                         "0.9)")
    report.update(new={"val_accuracy": 1.0, "test_accuracy": 0.5},
                  **band_verdict(document, 0.5))
    assert report_lines(report)[-1].startswith("in band: yes (test accuracy 0.5;")


def test_check_compares_the_test_split_its_results_file_records():
    from compgen_tf.experiments.check import _test_part
    from compgen_tf.experiments.kinds import experiment_for

    toy = experiment_for("stack_lstm")
    config = toy.run_config({"model": "stack_lstm", "task": "palindromes"})
    assert _test_part(toy, config, "palindromes", "palindromes_long") == "long"
    assert _test_part(toy, config, "palindromes", "palindromes_in_domain") == "test"
    # Files renamed with a suffix after they were written still name their split.
    assert _test_part(toy, config, "palindromes", "palindromes_long_lr0.01_early_stop") == "long"
    assert _test_part(toy, config, "palindromes_full_budget",
                      "palindromes_in_domain_full_budget") == "test"
    assert _test_part(toy, config, "palindromes", "something_else") is None


def test_a_run_continued_from_a_shorter_one_trains_as_the_longer_run(tmp_path, capsys):
    """`--continue-from`: seeds of 4 steps continued to 8 give the straight 8-step run's
    losses, evaluations and kept weights; anything but a longer max_steps is refused."""
    import keras

    overrides = TINY_SIZES["seq2seq"] + ["training.eval_every=2", "model_args.dropout=0.5",
                                         "model_args.max_output_length=8"]
    base = (["--model", "seq2seq", "--split", "simple_p1", "--seeds", "1",
             "--runs-dir", str(tmp_path / "runs"), "--results-dir", str(tmp_path / "results"),
             "--quiet"] + [arg for override in overrides for arg in ("--set", override)])
    assert reproduce(base + ["--steps", "4", "--name", "short"]) == 0
    assert reproduce(base + ["--steps", "8", "--name", "straight"]) == 0
    assert reproduce(base + ["--steps", "8", "--name", "long", "--continue-from", "short"]) == 0
    runs = tmp_path / "runs" / "seq2seq"

    def history(name):
        return [json.loads(line) for line in (runs / name / "seed0" / "history.jsonl")
                .read_text().splitlines()]

    def same(a, b):
        return {k: v for k, v in a.items() if k != "elapsed_s"} == \
            {k: v for k, v in b.items() if k != "elapsed_s"}

    straight, continued = history("straight"), history("long")
    assert [h["step"] for h in continued] == [2, 4, 6, 8]
    assert all(same(a, b) for a, b in zip(straight, continued)), (straight, continued)
    kept = [keras.saving.load_model(runs / name / "seed0" / "best_model.keras").get_weights()
            for name in ("straight", "long")]
    for a, b in zip(*kept):
        np.testing.assert_array_equal(a, b)
    metrics = json.loads((runs / "long" / "seed0" / "metrics.json").read_text())
    assert metrics["warm_start"]["step"] == 4 and metrics["steps"] == 8
    # The results file says where the seed started and how long its first part took.
    (record,) = load_results(tmp_path / "results" / "seq2seq" / "long.json")["runs"]
    short = json.loads((runs / "short" / "seed0" / "metrics.json").read_text())
    assert record["continued_from"]["step"] == 4
    assert record["continued_from"]["wall_time_s"] == short["wall_time_s"]
    # The shorter run is left as it was.
    assert [h["step"] for h in history("short")] == [2, 4]
    # A process killed after the parent's checkpoints were copied, before the run saved
    # its own: the next one extends them again rather than restoring "finished".
    from compgen_tf.experiments.experiment import copy_checkpoint, start_from

    killed = tmp_path / "killed"
    killed.mkdir()
    copy_checkpoint(runs / "short" / "seed0", killed)
    assert start_from(runs / "short" / "seed0", killed) is True
    (killed / "checkpoints" / "ckpt-6.index").touch()  # its own later checkpoint
    assert start_from(runs / "short" / "seed0", killed) is False
    # Parents that a longer run would not continue: trained on another backend, or
    # stopped before their max_steps.
    for name, change in (("short_jax", {"backend": "jax"}), ("short_early", {"steps": 3})):
        shutil.copytree(runs / "short", runs / name)
        (runs / name / "seed0" / "metrics.json").write_text(json.dumps(dict(short, **change)))
    capsys.readouterr()
    for refused, parent, message in [
            (["--steps", "8", "--name", "wide", "--set", "model_args.hidden_units=6"], "short",
             "only training.max_steps may differ"),
            (["--steps", "4", "--name", "same_length"], "short", "a continuation needs more"),
            (["--steps", "8", "--name", "orphan", "--first-seed", "1"], "short",
             "no finished run to continue"),
            (["--steps", "8", "--name", "from_jax"], "short_jax", "trained on the jax backend"),
            (["--steps", "8", "--name", "from_early"], "short_early", "stopped early")]:
        assert reproduce(base + refused + ["--continue-from", parent]) == 2, refused
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and message in err, err
