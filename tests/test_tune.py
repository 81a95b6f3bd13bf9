import json
from pathlib import Path

import pytest

from compgen_tf import registry
from compgen_tf.experiments.config import config_path, load_config
from compgen_tf.cli.tune import main as tune
from compgen_tf.experiments.search_space import load_search_space, search_space_path

SPLIT = "simple_p1"  # 209 train lines: 188 fit, 21 validation


def tiny_overrides(model):
    """`--set` values shrinking every size of the model's default configuration to 8 units."""
    defaults = load_config(config_path(model, SPLIT))["model_args"]
    sizes = sorted(key for key, value in defaults.items()
                   if isinstance(value, int) and not isinstance(value, bool) and value >= 16
                   and not key.startswith("max_"))
    # Without XLA: compiling each batch shape costs more than the few steps of a test.
    return ([f"model_args.{key}=8" for key in sizes]
            + ["model_args.max_output_length=8", "training.eval_every=2",
               "training.jit_compile=false"])


def as_args(overrides):
    return [arg for override in overrides for arg in ("--set", override)]


def trials_of(output):
    return json.loads((output / "trials.json").read_text())["trials"]


@pytest.mark.parametrize("model", sorted(registry.MODELS))
def test_committed_search_space_is_valid(model):
    path = search_space_path(model)
    assert "notes" in json.loads(path.read_text()), f"{path} should say where its ranges come from"
    # Keys and specs here; the values at both ends of every range are built against the
    # model's configuration by the one-trial search of tests/test_every_model.py.
    specs = load_search_space(path, model)
    assert specs and "notes" not in specs


# Every other model runs a one-trial search in tests/test_every_model.py.
@pytest.mark.parametrize("model", ["seq2seq"])
def test_random_search_ranks_trials_writes_best_config_and_resumes(model, tmp_path, capsys):
    output = tmp_path / "tune"
    overrides = tiny_overrides(model)
    args = (["--model", model, "--split", SPLIT, "--tuner", "random", "--max-trials", "2",
             "--steps", "4", "--output", str(output), "--quiet"] + as_args(overrides))
    assert tune(args) == 0
    trials = trials_of(output)
    assert len(trials) == 2
    assert all(t["status"] == "COMPLETED" for t in trials)
    scores = [t["val_exact_match"] for t in trials]
    assert scores == sorted(scores, reverse=True)
    assert [t["rank"] for t in trials] == [1, 2]
    assert all(t["steps"] == 4 and t["wall_time_s"] is not None for t in trials)
    fixed = {override.partition("=")[0] for override in overrides}
    searched = set(load_search_space(search_space_path(model), model)) - fixed
    assert all(set(t["hyperparameters"]) == searched for t in trials)
    for trial in trials:  # trials live under the tuner's project and never look at test
        run_dir = Path(trial["run_dir"])
        assert run_dir.is_relative_to(output / "random")
        assert set(json.loads((run_dir / "metrics.json").read_text())["accuracy"]) == \
            {"validation"}

    best = load_config(output / "best_config.json")
    for name, value in trials[0]["hyperparameters"].items():
        section, _, key = name.partition(".")
        assert best[section][key] == pytest.approx(value), name
    assert best["training"]["max_steps"] == 4 and best["model_args"]["max_output_length"] == 8
    table = (output / "trials.md").read_text()
    assert f"| 1 | {trials[0]['trial_id']} | {scores[0]:.4f} |" in table
    assert f"| 2 | {trials[1]['trial_id']} | {scores[1]:.4f} |" in table

    finished = {t["trial_id"]: (Path(t["run_dir"]) / "metrics.json").stat().st_mtime_ns
                for t in trials}
    capsys.readouterr()
    assert tune(args) == 0  # the same command again: the search is complete, nothing reruns
    assert "Reloading Tuner" in capsys.readouterr().out
    again = trials_of(output)
    assert [t["trial_id"] for t in again] == [t["trial_id"] for t in trials]
    assert {t["trial_id"]: (Path(t["run_dir"]) / "metrics.json").stat().st_mtime_ns
            for t in again} == finished

    assert tune([a if a != "4" else "5" for a in args]) == 2  # another budget: refused
    assert "holds another search" in capsys.readouterr().err


def test_interrupted_search_retries_the_same_trial(tmp_path, monkeypatch):
    from compgen_tf.experiments import scan as runs

    output = tmp_path / "tune"
    args = ["--model", "seq2seq", "--split", SPLIT, "--tuner", "random", "--max-trials", "1",
            "--steps", "2", "--output", str(output), "--quiet",
            *as_args(tiny_overrides("seq2seq"))]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(runs.ScanExperiment, "train", interrupted)
        with pytest.raises(KeyboardInterrupt):
            tune(args)
    trial_file = output / "random" / "trial_0" / "trial.json"
    drawn = json.loads(trial_file.read_text())["hyperparameters"]["values"]
    assert tune(args) == 0
    (trial,) = trials_of(output)
    assert trial["status"] == "COMPLETED" and trial["steps"] == 2
    assert json.loads(trial_file.read_text())["hyperparameters"]["values"] == drawn


def test_hyperband_maps_epoch_budgets_to_steps(tmp_path):
    space = tmp_path / "space.json"
    space.write_text(json.dumps({
        "model_args.hidden_units": {"type": "int", "min": 4, "max": 8, "step": 4},
        "training.learning_rate": {"type": "choice", "values": [0.001, 0.01]}}))
    output = tmp_path / "hyperband"
    # max_epochs 2, factor 2: two 1-epoch trials, then the better one again with 2 epochs.
    args = ["--model", "seq2seq", "--split", SPLIT, "--tuner", "hyperband", "--max-epochs", "2",
            "--factor", "2", "--max-trials", "3", "--steps", "2", "--search-space", str(space),
            "--output", str(output), "--quiet",
            *as_args(["model_args.embedding_dim=8", "model_args.max_output_length=8",
                      "training.eval_every=2"])]
    assert tune(args) == 0
    trials = {t["trial_id"]: t for t in trials_of(output)}
    assert len(trials) == 3
    by_epochs = sorted(trials.values(), key=lambda t: (t["epochs"], t["trial_id"]))
    assert [(t["epochs"], t["steps"]) for t in by_epochs] == [(1, 2), (1, 2), (2, 4)]
    promoted = by_epochs[2]
    assert promoted["from_trial"] in {by_epochs[0]["trial_id"], by_epochs[1]["trial_id"]}
    assert promoted["hyperparameters"] == trials[promoted["from_trial"]]["hyperparameters"]
    # The promoted trial continued its parent's run: 2 steps of its own after the parent's 2,
    # and its history starts with the parent's evaluation.
    parent_run = Path(trials[promoted["from_trial"]]["run_dir"])
    metrics = json.loads((Path(promoted["run_dir"]) / "metrics.json").read_text())
    assert (metrics["warm_start"]["from"], metrics["warm_start"]["step"]) == (str(parent_run), 2)
    history = (Path(promoted["run_dir"]) / "history.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in history] == [2, 4]
    assert history[0] == (parent_run / "history.jsonl").read_text().splitlines()[0]
    assert load_config(output / "best_config.json")["model_args"]["hidden_units"] in (4, 8)


@pytest.mark.parametrize("space, message", [
    ({"model_args.dropout": {"type": "uniform", "min": 0.0, "max": 0.5}},
     "unknown type 'uniform'"),
    ({"model_args.bogus_units": {"type": "int", "min": 4, "max": 8}},
     "'bogus_units' is not a model_args key of model 'seq2seq'"),
    ({"training.learning_rate": {"type": "float", "min": 0.1, "max": 0.01}},
     "bad bounds: min (0.1) must be below max (0.01)"),
    ({"model_args.hidden_units": {"type": "int", "min": 4, "max": 8.5}}, "must be an integer"),
    ({"model_args.dropout": {"type": "float", "min": 0.0, "max": 1.0}},
     "the value 1.0 in its range is rejected: model_args of seq2seq: dropout must be in [0, 1)"),
    ({"training.batch_size": {"type": "int", "min": 0, "max": 8}}, "batch_size must be >= 1"),
    ({"trainer.batch_size": {"type": "int", "min": 1, "max": 8}}, "SECTION.KEY"),
    ({"training.learning_rate": {"type": "choice", "values": [0.1]}}, "at least 2 values"),
    ({"training.learning_rate": {"type": "float", "min": 0.0, "max": 0.1, "sampling": "log"}},
     "log sampling needs min > 0"),
    ({"training.clip_norm": {"type": "float", "min": 1, "max": 2, "scale": 3}},
     "unknown field(s) ['scale']"),
    ({"notes": "nothing"}, "no hyperparameters to search"),
])
def test_bad_search_space_exits_2_with_a_precise_message(tmp_path, capsys, space, message):
    path = tmp_path / "space.json"
    path.write_text(json.dumps(space))
    output = tmp_path / "out"
    assert tune(["--model", "seq2seq", "--split", SPLIT, "--search-space", str(path),
                 "--output", str(output)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {path}") and message in err, err
    assert not output.exists()


def test_bad_command_lines_exit_2(tmp_path, capsys):
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    assert tune(["--model", "seq2seq", "--split", SPLIT, "--search-space", str(path)]) == 2
    assert "is not valid JSON" in capsys.readouterr().err
    assert tune(["--model", "seq2seq", "--split", SPLIT, "--search-space",
                 str(tmp_path / "missing.json")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert tune(["--model", "seq2seq", "--split", "nosuchsplit"]) == 2
    assert "model 'seq2seq' does not train on 'nosuchsplit'" in capsys.readouterr().err
    assert tune(["--model", "stack_lstm", "--split", "palindromes"]) == 2
    assert "stack_lstm trains on a --task" in capsys.readouterr().err
    # Trials are ranked on exact match, which a BLEU-selected translation config is not.
    assert tune(["--model", "seq2seq", "--split", "mt_eng_fra_daxy", "--output",
                 str(tmp_path / "mt")]) == 2
    assert "training.selection 'bleu' cannot be searched" in capsys.readouterr().err
    for bad, message in ((["--tuner", "grid"], "invalid choice: 'grid'"),
                         (["--model", "nosuchmodel"], "unknown model 'nosuchmodel'")):
        args = dict(zip(["--model", "--split"], ["seq2seq", SPLIT]))
        args.update(dict([bad]))
        with pytest.raises(SystemExit) as exit_info:
            tune([item for pair in args.items() for item in pair])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1  # one line, no usage block


def test_distributed_search_needs_keras_tuner_environment(tmp_path, capsys, monkeypatch):
    for name in ("KERASTUNER_TUNER_ID", "KERASTUNER_ORACLE_IP", "KERASTUNER_ORACLE_PORT"):
        monkeypatch.delenv(name, raising=False)
    args = ["--model", "seq2seq", "--split", SPLIT, "--output", str(tmp_path)]
    assert tune(args + ["--distributed"]) == 2
    assert "missing: KERASTUNER_TUNER_ID, KERASTUNER_ORACLE_IP" in capsys.readouterr().err
    monkeypatch.setenv("KERASTUNER_ORACLE_IP", "127.0.0.1")
    assert tune(args) == 2
    assert "pass --distributed" in capsys.readouterr().err


def test_distributed_search_splits_trials_between_two_workers(tmp_path):
    """A chief and two workers, separate processes on 127.0.0.1, run one search."""
    import os
    import socket
    import subprocess
    import sys

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    output = tmp_path / "tune"
    args = (["--model", "seq2seq", "--split", SPLIT, "--tuner", "random", "--max-trials", "4",
             "--steps", "2", "--output", str(output), "--quiet", "--distributed"]
            + as_args(tiny_overrides("seq2seq")))
    processes = {}
    for tuner_id in ("chief", "tuner0", "tuner1"):
        env = dict(os.environ, KERASTUNER_TUNER_ID=tuner_id, KERASTUNER_ORACLE_IP="127.0.0.1",
                   KERASTUNER_ORACLE_PORT=str(port), TF_CPP_MIN_LOG_LEVEL="3")
        processes[tuner_id] = subprocess.Popen(
            [sys.executable, "-m", "compgen_tf", "tune", *args], env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    outputs = {name: process.communicate(timeout=600)[0] for name, process in processes.items()}
    assert {name: p.returncode for name, p in processes.items()} == \
        {"chief": 0, "tuner0": 0, "tuner1": 0}, outputs
    trials = trials_of(output)
    assert len(trials) == 4 and all(t["status"] == "COMPLETED" for t in trials)
    assert {t["worker"] for t in trials} == {"tuner0", "tuner1"}
    assert outputs["chief"].count("best: trial") == 1
    for worker in ("tuner0", "tuner1"):
        assert "best: trial" not in outputs[worker]
        assert "the chief writes the report" in outputs[worker]
    assert load_config(output / "best_config.json")["training"]["max_steps"] == 2
