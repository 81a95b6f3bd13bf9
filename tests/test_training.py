import io
import json
import re

import keras
import numpy as np
import pytest

import tfds_scan
from compgen_tf.training.data import encode_split, epoch_batches, gather_batch
from compgen_tf.models import AttentionSeq2Seq
from compgen_tf.training.batches import SplitBatches
from compgen_tf.training.callbacks import (BEST_MODEL, ModelSelection, RunReport,
                                           TrainingProgress)
from compgen_tf.training.fit import fit_split
from compgen_tf.training.settings import TrainingConfig


def learning_rate_schedule(settings, schedule="every"):
    return TrainingConfig.from_section(
        settings, drops_once=schedule == "once").learning_rate_schedule()
from compgen_tf.models.preprocessor import vocabulary_words

# A small slice of SCAN: the commands of at most 3 words.
EXAMPLES = [(c, tfds_scan.interpret(c)) for c in tfds_scan.all_commands() if len(c.split()) <= 3]
TRAINING = {"batch_size": 16, "learning_rate": 0.01, "clip_norm": 5.0,
            "teacher_forcing_ratio": 0.5, "eval_every": 5, "checkpoint_every": 5,
            "patience": 100}


def make_model():
    keras.utils.set_random_seed(0)
    source = vocabulary_words(c for c, _ in EXAMPLES)
    target = vocabulary_words(a for _, a in EXAMPLES)
    return AttentionSeq2Seq.from_words(source, target, embedding_dim=16, hidden_units=16,
                                       dropout=0.1, max_output_length=12)


def run(run_dir, max_steps, callbacks=(), **overrides):
    """Trains the tiny model in `run_dir` with `fit_split`; returns (model, summary)."""
    model = make_model()
    split = encode_split(model, EXAMPLES)
    settings = dict(TRAINING, max_steps=max_steps, **overrides)
    return model, fit_split(model, settings, run_dir, split, split, seed=3, verbose=0,
                            callbacks=callbacks)


class DieAtStep(keras.callbacks.Callback):
    """Stands for a killed process: raises once the optimizer has taken `step` steps."""

    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if int(self.model.optimizer.iterations.numpy()) >= self.step:
            raise KeyboardInterrupt


def test_epoch_batches_cover_every_example_once_and_are_deterministic():
    model = make_model()
    split = encode_split(model, EXAMPLES)
    batches = epoch_batches(split, 7, seed=1, epoch=0)
    indices = np.concatenate(batches)
    assert sorted(indices) == list(range(len(EXAMPLES)))
    again = epoch_batches(split, 7, seed=1, epoch=0)
    assert all(np.array_equal(a, b) for a, b in zip(batches, again))
    assert not all(np.array_equal(a, b)
                   for a, b in zip(batches, epoch_batches(split, 7, seed=1, epoch=1)))
    source, target = gather_batch(split, batches[0], length_bucket=8)
    assert target.shape[1] % 8 == 0 or target.shape[1] == split.target_ids.shape[1]
    stream = SplitBatches(split, 7, seed=1)
    assert stream.batches_per_epoch == len(batches)
    for step, index in ((0, 0), (len(batches) + 2, 2)):  # step -> (epoch, batch) of the epoch
        epoch_of_step = epoch_batches(split, 7, seed=1, epoch=step // len(batches))
        np.testing.assert_array_equal(stream.batch(step)[1],
                                      gather_batch(split, epoch_of_step[index])[1])


def test_interrupted_training_resumes_exactly(tmp_path):
    straight, _ = run(tmp_path / "straight", max_steps=20)
    with pytest.raises(KeyboardInterrupt):  # dies at step 12; the last checkpoint is at 10
        run(tmp_path / "interrupted", max_steps=20, callbacks=[DieAtStep(12)])
    resumed, summary = run(tmp_path / "interrupted", max_steps=20)
    assert summary["steps"] == 20
    for a, b in zip(straight.weights, resumed.weights):  # to the last bit, on one machine
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)
    history = [json.loads(line) for line in (tmp_path / "straight/history.jsonl").open()]
    assert [h["step"] for h in history] == [5, 10, 15, 20]
    resumed_history = [json.loads(line)
                       for line in (tmp_path / "interrupted/history.jsonl").open()]
    assert [h["step"] for h in resumed_history] == [5, 10, 15, 20]
    assert [h["val_accuracy"] for h in resumed_history] == [h["val_accuracy"] for h in history]
    # The loss window (LOSS_WINDOW updates) is checkpointed: step 15's spans the restart.
    assert [h["loss"] for h in resumed_history] == [h["loss"] for h in history]


def test_the_logged_loss_does_not_depend_on_the_evaluation_cadence(tmp_path):
    """The same run (bit-identical weights) evaluated every 5 or every 10 steps logs the
    same training loss at step 10: the mean of its last LOSS_WINDOW updates (issue 69)."""
    every_5, _ = run(tmp_path / "every_5", max_steps=10)
    every_10, _ = run(tmp_path / "every_10", max_steps=10, eval_every=10, checkpoint_every=10)
    for a, b in zip(every_5.weights, every_10.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)
    logged = [{h["step"]: h["loss"] for h in map(json.loads, (tmp_path / name /
                                                              "history.jsonl").open())}
              for name in ("every_5", "every_10")]
    assert sorted(logged[0]) == [5, 10] and sorted(logged[1]) == [10]
    assert logged[0][10] == logged[1][10]


def test_a_checkpoint_without_the_loss_window_still_restores(tmp_path):
    """Checkpoints written before `recent_losses` existed resume (the window starts empty)."""
    import tensorflow as tf

    from compgen_tf.training.callbacks import ResumableCheckpoint

    model = make_model()
    model.compile(optimizer="adam")
    model.optimizer.build(model.trainable_variables)
    progress = TrainingProgress()
    progress["best_step"].assign(7)
    checkpoint = ResumableCheckpoint(model, progress, tmp_path, every=5)
    older = {name: value for name, value in checkpoint._objects.items()
             if name != "recent_losses"}
    tf.train.CheckpointManager(tf.train.Checkpoint(**older), tmp_path / "checkpoints",
                               max_to_keep=2).save(checkpoint_number=3)
    restored = TrainingProgress()
    assert ResumableCheckpoint(model, restored, tmp_path, every=5).restore()
    assert restored.value("best_step") == 7
    assert np.isnan(restored["recent_losses"].numpy()).all()


class _Terminal(io.StringIO):
    def isatty(self):
        return True


RECORD = {"step": 300, "loss": 1.23456, "val_accuracy": 0.5, "val_bleu": 12.5, "elapsed_s": 4.2}


def test_run_report_outside_a_terminal_is_one_plain_line_per_evaluation():
    log = io.StringIO()
    report = RunReport(max_steps=500, start_step=200, stream=log)
    for step in range(201, 301):
        report.step(step, lambda: 1.0)
    report.evaluation(RECORD)
    report.close()
    assert log.getvalue() == ("step 300/500  loss 1.2346  val_accuracy 0.5000  "
                              "val_bleu 12.5000  elapsed 4.2 s\n")


def test_run_report_on_a_terminal_is_one_bar_over_the_whole_run():
    screen = _Terminal()
    report = RunReport(max_steps=500, start_step=200, stream=screen)
    report.step(201, lambda: 2.0)  # a resumed run's bar starts at its checkpoint's step
    assert screen.getvalue().startswith("\r201/500 [")
    report.evaluation(RECORD)
    report.close()
    shown = screen.getvalue()
    assert "\nstep 300/500  loss 1.2346" in shown.replace("\r", "\n")
    assert re.search(r"\r300/500 \[={18}> {11}\]  60%  loss 1\.2346", shown), repr(shown)
    assert re.findall(r"\d+/(\d+)", shown) == ["500"] * len(re.findall(r"\d+/\d+", shown))
    assert "\x1b" not in shown and "\b" not in shown


def test_patience_survives_a_restart(tmp_path):
    # patience 2 with a learning rate that cannot learn: the run stops at the third
    # evaluation, although the second process only sees one.
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, max_steps=100, callbacks=[DieAtStep(12)], patience=2, learning_rate=1e-9)
    _, summary = run(tmp_path, max_steps=100, patience=2, learning_rate=1e-9)
    assert summary["steps"] == 15 and summary["best_step"] == 5, summary
    _, again = run(tmp_path, max_steps=100, patience=2, learning_rate=1e-9)
    assert again == summary  # a finished run is not trained again


def test_tiny_run_learns_training_set_and_keeps_best_model(tmp_path):
    _, summary = run(tmp_path, max_steps=600, eval_every=50, checkpoint_every=50,
                     stop_at_accuracy=1.0, learning_rate=0.01)
    assert summary["best_val_accuracy"] == 1.0, summary
    assert summary["steps"] < 600  # stopped as soon as validation was perfect
    best = keras.saving.load_model(tmp_path / BEST_MODEL)
    commands = [c for c, _ in EXAMPLES]
    assert best.translate(commands) == [a for _, a in EXAMPLES]


def test_non_finite_loss_is_a_clear_error(tmp_path):
    model = make_model()
    model.compile(optimizer="adam")
    selection = ModelSelection(lambda m: 0.0, TrainingProgress(), tmp_path, lambda: None,
                                    eval_every=5, max_steps=10, patience=2,
                                    stop_at_accuracy=1.0)
    selection.set_model(model)
    selection.on_train_batch_end(0, {"loss": 1.5})
    with pytest.raises(FloatingPointError, match="training loss became nan at step 0"):
        selection.on_train_batch_end(1, {"loss": float("nan")})


def _select(tmp_path, scores, select_on, **settings):
    """Three evaluations of `ModelSelection` fed `scores`; (steps saved, progress)."""
    model = make_model()
    model.compile(optimizer="adam")
    scores = iter(scores)
    saved_at, progress = [], TrainingProgress()
    settings = {"eval_every": 1, "max_steps": 10, "patience": 5, "stop_at_accuracy": 1.0,
                **settings}
    selection = ModelSelection(lambda m: next(scores), progress, tmp_path,
                               lambda: saved_at.append(int(model.optimizer.iterations.numpy())),
                               select_on=select_on, **settings)
    selection.set_model(model)
    selection.on_train_begin()
    for step in (1, 2, 3):
        model.optimizer.iterations.assign(step)
        selection.on_train_batch_end(0, {"loss": 1.0})
        selection.on_epoch_end(step - 1, {})
    return saved_at, progress


def test_selection_on_bleu_keeps_the_best_bleu_where_exact_match_ties(tmp_path):
    import json

    saved_at, progress = _select(tmp_path, [{"accuracy": 0.0, "bleu": 5.0},
                                            {"accuracy": 0.0, "bleu": 12.5},
                                            {"accuracy": 0.0, "bleu": 9.0}], "bleu")
    # Exact match alone (0.0 every time) would have kept step 1.
    assert saved_at == [1, 2] and progress.value("best_step") == 2
    assert progress.value("best_accuracy") == 0.125
    history = [json.loads(line) for line in (tmp_path / "history.jsonl").read_text().splitlines()]
    assert [line["val_bleu"] for line in history] == [5.0, 12.5, 9.0]
    with pytest.raises(ValueError, match="needs a translation task"):
        _select(tmp_path, [0.5] * 3, "bleu")


def test_selection_last_keeps_every_evaluation(tmp_path):
    saved_at, progress = _select(tmp_path, [0.5, 0.9, 0.4], "last", max_steps=3, patience=1,
                                 stop_at_accuracy=1.01)
    # Exact match would have kept step 2 and stopped at step 3 for want of patience.
    assert saved_at == [1, 2, 3] and progress.value("best_step") == 3
    assert progress.value("best_accuracy") == 0.4


def test_learning_rate_schedule_is_constant_or_halves_stepwise_or_drops_once():
    assert learning_rate_schedule({"learning_rate": 0.01}) == 0.01
    schedule = learning_rate_schedule({"learning_rate": 0.01, "learning_rate_decay_steps": 1000,
                                       "learning_rate_decay_factor": 0.5})
    rates = [float(schedule(step)) for step in (0, 999, 1000, 2500)]
    np.testing.assert_allclose(rates, [0.01, 0.01, 0.005, 0.0025], rtol=1e-6)
    once = learning_rate_schedule({"learning_rate": 0.01, "learning_rate_decay_factor": 0.1,
                                   "max_steps": 100}, schedule="once")
    np.testing.assert_allclose([float(once(s)) for s in (0, 50, 51, 99)],
                               [0.01, 0.01, 0.001, 0.001], rtol=1e-6)


def test_initial_weights_do_not_depend_on_building_the_dataset(tmp_path, monkeypatch):
    """The first run on a fresh TFDS data directory builds the dataset (which draws from the
    global random generators); it must train exactly as a run that finds it built."""
    from compgen_tf.experiments.scan import SCAN

    monkeypatch.setenv("COMPGEN_TF_DATA_DIR", str(tmp_path / "tensorflow_datasets"))
    config = SCAN.resolve_config("seq2seq", "simple_p1", overrides=[
        "model_args.hidden_units=4", "model_args.embedding_dim=4", "training.max_steps=2",
        "training.eval_every=2"])
    weights = []
    for name in ("building", "built"):
        SCAN.train(config, tmp_path / name, verbose=0, evaluate_splits=())
        best = keras.saving.load_model(tmp_path / name / BEST_MODEL)
        weights.append([w.numpy() for w in best.weights])
    for a, b in zip(*weights):
        np.testing.assert_array_equal(a, b)


def test_a_warm_started_run_continues_its_parent_on_the_evaluation_grid(tmp_path):
    """A Hyperband child continues its parent's checkpoint (here at step 7, between two
    evaluations of every 5 steps) with evaluations at 10 and 15 and a saved reset."""
    from compgen_tf.experiments.experiment import copy_checkpoint

    run(tmp_path / "parent", max_steps=7)  # evaluations at 5 and 7 (the last step)
    copy_checkpoint(tmp_path / "parent", tmp_path / "child")
    model = make_model()
    split = encode_split(model, EXAMPLES)
    summary = fit_split(model, dict(TRAINING, max_steps=15), tmp_path / "child", split, split,
                        seed=3, verbose=0, extend=True)
    steps = [json.loads(line)["step"] for line in open(tmp_path / "child" / "history.jsonl")]
    assert steps == [5, 7, 10, 15] and summary["steps"] == 15
    # The parent's run is untouched and finished.
    _, again = run(tmp_path / "parent", max_steps=7)
    assert again["steps"] == 7
