"""`python -m compgen_tf.train --model M --task T`: run directories, skip, resume, results."""

import json

import pytest

from compgen_tf import registry, train
from compgen_tf.cli import evaluate
from compgen_tf.experiments import toy as toy_runs
from compgen_tf.experiments.kinds import experiment_for
from compgen_tf.experiments.config import load_config
from compgen_tf.cli.reproduce import main as reproduce
from compgen_tf.experiments.results import load_results
from compgen_tf.experiments.toy import TOY
from compgen_tf.training.callbacks import ModelSelection

TINY = ["--steps", "20", "--set", "training.eval_every=10", "--quiet"]


def test_every_toy_model_has_a_config_for_each_task():
    for model, tasks in toy_runs.MODEL_TASKS.items():
        assert experiment_for(model) is TOY
        assert registry.MODELS[model].tasks == tasks
        for task in tasks:
            config = load_config(f"configs/{model}/{task}.json")
            assert config["notes"] and config["training"]["max_steps"] > 0
    stack = load_config("configs/stack_lstm/palindromes.json")["model_args"]
    assert stack == {"embedding_dim": 10, "units": 10, "depth": 20}
    assert load_config("configs/lstm_baseline/palindromes.json")["model_args"]["units"] == 100
    composition = load_config("configs/symbol_convolution/composition.json")["model_args"]
    assert (composition["positions"], composition["channels"]) == (11, 5)


def test_evaluate_scores_each_part_of_a_toy_run_on_its_own_data(tmp_path):
    """`evaluate --run` scores "train" on the run's fit part, "validation" on its carve and
    "test" on the test split: recounted here from the best model on `task_data`. (The MLP,
    not the symbol convolution, which scores 1.0 on every part and so tells none apart;
    measured 2026-12-01: fit 23/24, validation 1.0, test 0.5.)"""
    import keras
    import numpy as np

    out = tmp_path / "run"
    argv = ["--model", "mlp_baseline", "--task", "rule_learning", "--output", str(out)]
    assert train.main(argv + TINY) == 0
    assert evaluate.main(["--run", str(out)]) == 0
    again = json.loads((out / "metrics.json").read_text())
    config = json.loads((out / "config.json").read_text())
    data = toy_runs.task_data("rule_learning", config["seed"], config["data"])
    best = keras.saving.load_model(out / "best_model.keras")
    counted = {part: float(np.mean(best.predict(data[part][0], verbose=0).argmax(-1)
                                   == data[part][1])) for part in ("fit", "validation", "test")}
    assert len({counted["fit"], counted["test"]}) == 2, counted  # else it shows nothing
    assert again["accuracy"] == {"train": counted["fit"],
                                 "validation": counted["validation"], "test": counted["test"]}


def test_cli_writes_a_run_directory_and_skips_a_finished_run(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["--model", "symbol_convolution", "--task", "rule_learning", "--output", str(out)]
    assert train.main(argv + TINY) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["accuracy"]) == {"validation", "test"}
    assert metrics["seed"] == 0 and metrics["steps"] == 20 and "keras" in metrics["versions"]
    assert json.loads((out / "config.json").read_text())["task"] == "rule_learning"
    assert (out / "best_model.keras").exists()
    assert [json.loads(line)["step"] for line in open(out / "history.jsonl")] == [10, 20]
    assert train.main(argv + TINY) == 0
    assert "is finished: not trained again" in capsys.readouterr().out
    assert json.loads((out / "metrics.json").read_text()) == metrics
    # Another configuration in the same directory is refused, not mixed in.
    assert train.main(argv + ["--steps", "30", "--quiet"]) == 2
    assert "different configuration" in capsys.readouterr().err
    # `compgen_tf.cli.evaluate --run` scores a toy run again: the same figures, and train added.
    assert evaluate.main(["--run", str(out)]) == 0
    again = json.loads((out / "metrics.json").read_text())
    assert again["accuracy"]["validation"] == metrics["accuracy"]["validation"]
    assert again["accuracy"]["test"] == metrics["accuracy"]["test"]
    assert 0.0 <= again["accuracy"]["train"] <= 1.0 and again["steps"] == 20
    assert "validation: accuracy" in capsys.readouterr().out
    # The run directory gives its best model back as a task model (what ToyTask.from_run was).
    import numpy as np

    from compgen_tf.experiments.experiment import load_run_model, load_run_task
    from compgen_tf.models.seq2seq_model import Seq2SeqModel
    from compgen_tf.models.toy_task import ToyTask

    task = load_run_task(out, ToyTask)
    backbone = load_run_model(out)
    assert isinstance(task, ToyTask) and task.name == backbone.name
    inputs = np.zeros((2, *backbone.input.shape[1:]), backbone.input.dtype)
    np.testing.assert_array_equal(task.predict(inputs, verbose=0),
                                  backbone.predict(inputs, verbose=0))
    with pytest.raises(TypeError, match="holds a ToyTask, not a Seq2SeqModel"):
        load_run_task(out, Seq2SeqModel)


def test_interrupted_run_resumes_where_it_stopped(tmp_path, monkeypatch):
    out = tmp_path / "run"
    argv = ["--model", "mlp_baseline", "--task", "composition", "--output", str(out),
            "--steps", "40", "--set", "training.eval_every=10", "--quiet"]
    original = ModelSelection.on_epoch_end

    def crash_at_third_evaluation(self, epoch, logs=None):
        if epoch == 2:
            raise KeyboardInterrupt("killed")
        original(self, epoch, logs)

    monkeypatch.setattr(ModelSelection, "on_epoch_end", crash_at_third_evaluation)
    with pytest.raises(KeyboardInterrupt):
        train.main(argv)
    assert not (out / "metrics.json").exists() and (out / "checkpoints").exists()
    monkeypatch.setattr(ModelSelection, "on_epoch_end", original)
    assert train.main(argv) == 0
    steps = [json.loads(line)["step"] for line in open(out / "history.jsonl")]
    assert steps == [10, 20, 30, 40]
    assert json.loads((out / "metrics.json").read_text())["steps"] == 40

    # The resumed run is the uninterrupted run: same best model, same scores.
    straight = tmp_path / "straight"
    assert train.main([a if a != str(out) else str(straight) for a in argv]) == 0
    resumed_metrics = json.loads((out / "metrics.json").read_text())
    straight_metrics = json.loads((straight / "metrics.json").read_text())
    assert resumed_metrics["accuracy"] == straight_metrics["accuracy"]
    assert resumed_metrics["best_step"] == straight_metrics["best_step"]


@pytest.mark.parametrize("argv, message", [
    (["--model", "stack_lstm", "--task", "composition"],
     "model 'stack_lstm' does not train on 'composition'; its tasks: palindromes, "
     "palindromes_depth"),
    (["--model", "stack_lstm"], "needs --task"),
    (["--model", "stack_lstm", "--task", "palindromes", "--split", "simple"],
     "stack_lstm trains on a --task, not a SCAN --split"),
    (["--model", "seq2seq", "--task", "palindromes"], "seq2seq trains on a SCAN --split"),
])
def test_cli_errors(argv, message, capsys):
    assert train.main(argv) == 2
    assert message in capsys.readouterr().err


def test_reproduce_writes_results_per_test_split(tmp_path):
    argv = ["--model", "lstm_baseline", "--task", "palindromes", "--seeds", "2",
            "--steps", "4", "--set", "training.eval_every=2", "--set", "data.train_size=120",
            "--set", "data.test_size=12", "--set", "training.jit_compile=false", "--quiet",
            "--runs-dir", str(tmp_path / "runs"),
            "--results-dir", str(tmp_path / "results")]
    assert reproduce(argv) == 0
    for name in ("palindromes_in_domain", "palindromes_long"):
        document = load_results(tmp_path / "results" / "lstm_baseline" / f"{name}.json")
        assert [r["seed"] for r in document["runs"]] == [0, 1]
        assert document["summary"]["n"] == 2 and "test_sequence_accuracy" in document["runs"][0]
    assert (tmp_path / "runs" / "lstm_baseline" / "palindromes" / "seed1" / "metrics.json").exists()
    # A variant configuration gets its own run directories and results files.
    variant = ["--name", "palindromes_lr3", "--set", "training.learning_rate=0.003"]
    assert reproduce(argv[:4] + ["--seeds", "1"] + argv[6:] + variant) == 0
    assert (tmp_path / "runs" / "lstm_baseline" / "palindromes_lr3" / "seed0").exists()
    assert load_results(tmp_path / "results" / "lstm_baseline" / "palindromes_long_lr3.json")[
        "config"]["training"]["learning_rate"] == 0.003
    # More seeds of the same configuration join the file; another configuration under the
    # same name is refused before anything is trained.
    assert reproduce(argv[:4] + ["--seeds", "1", "--first-seed", "2"] + argv[6:]) == 0
    document = load_results(tmp_path / "results" / "lstm_baseline" / "palindromes_long.json")
    assert [r["seed"] for r in document["runs"]] == [0, 1, 2]
    assert "--first-seed" in document["runs"][2]["command"]
    assert "--first-seed" not in document["runs"][0]["command"]
    changed = argv[:4] + ["--seeds", "1", "--first-seed", "3"] + argv[6:] + [
        "--set", "training.learning_rate=0.003"]
    assert reproduce(changed) == 2
    assert not (tmp_path / "runs" / "lstm_baseline" / "palindromes" / "seed3").exists()


def test_reproduce_records_its_own_command_for_every_kind_of_model(tmp_path, capsys):
    argv = ["--model", "mlp_baseline", "--task", "composition", "--seeds", "1",
            "--steps", "10", "--set", "training.eval_every=10", "--quiet",
            "--runs-dir", str(tmp_path / "runs"), "--results-dir", str(tmp_path / "results")]
    assert reproduce(argv) == 0
    document = load_results(tmp_path / "results" / "mlp_baseline" / "composition.json")
    assert document["summary"]["n"] == 1
    assert document["command"] == ("python -m compgen_tf reproduce --model mlp_baseline --task "
                                   "composition --seeds 1 --steps 10 --set "
                                   "training.eval_every=10 --quiet")
    assert document["runs"][0]["command"] == document["command"]
    # A toy task is a --task, a SCAN split a --split: the other is one clear line, exit 2.
    assert reproduce(["--model", "mlp_baseline", "--split", "composition"]) == 2
    assert "mlp_baseline trains on a --task" in capsys.readouterr().err


def test_a_toy_seed_trained_on_jax_says_so_in_its_results_record():
    from compgen_tf.experiments.toy import results_records

    metrics = {"seed": 2, "accuracy": {"validation": 1.0, "test": 0.5, "long": 0.25},
               "wall_time_s": 3.0, "steps": 10, "best_step": 8, "command": "c",
               "versions": {"commit": "abc"}}
    records = results_records([dict(metrics, backend="jax"), metrics], "palindromes")
    assert records["palindromes_long"][0] == {
        "seed": 2, "val_accuracy": 1.0, "test_accuracy": 0.25, "wall_time_s": 3.0,
        "steps": 10, "best_step": 8, "command": "c", "backend": "jax"}
    assert "backend" not in records["palindromes_in_domain"][1]

def test_an_interrupted_toy_run_resumes_even_after_evaluate_wrote_its_scores(
        tmp_path, monkeypatch):
    """`evaluate` on an interrupted run writes a metrics.json without training figures; the
    run must still resume, not be taken for finished."""
    import keras

    from compgen_tf.experiments.toy import TOY
    from compgen_tf.training import fit

    config = TOY.resolve_config("mlp_baseline", "rule_learning",
                                overrides=["training.eval_every=5",
                                           "training.checkpoint_every=5"], steps=10)
    run_dir = tmp_path / "run"

    class StopAtStep7(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if int(self.model.optimizer.iterations.numpy()) == 7:
                raise KeyboardInterrupt

    fit_run = fit.fit_run
    with monkeypatch.context() as patch:
        patch.setattr(fit, "fit_run", lambda *a, **k: fit_run(*a, callbacks=[StopAtStep7()], **k))
        with pytest.raises(KeyboardInterrupt):
            TOY.train(config, run_dir, seed=0, verbose=0)
    TOY.evaluate(run_dir, ["validation"], verbose=0)  # the best model of step 5, scored
    assert "steps" not in json.loads((run_dir / "metrics.json").read_text())
    resumed = TOY.train(config, run_dir, seed=0, verbose=0)
    assert resumed["steps"] == 10 and TOY.finished(resumed, config)
