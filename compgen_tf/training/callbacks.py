"""Callbacks that give `fit` what the library's runs need and Keras does not have."""

from __future__ import annotations

import json
import math
import os
import sys
import time
from pathlib import Path

import keras
import tensorflow as tf

from compgen_tf.errors import RunDirectoryError

BEST_MODEL = "best_model.keras"


class TrainingProgress:
    """The run's selection state, as variables, so that it is checkpointed with the weights.

    `best_accuracy` (the best selection score: an accuracy, or BLEU / 100), `best_loss` (its
    tie-breaker), `best_step`, `evaluations_since_best`
    (patience), `finished` and `elapsed_seconds` (training time over every process of the run).
    """

    NAMES = (("best_step", 0), ("evaluations_since_best", 0), ("finished", 0),
             ("best_accuracy", -1.0), ("best_loss", float("inf")), ("elapsed_seconds", 0.0))

    def __init__(self):
        # float64: a float32 best score of 0.7 is 0.699999988, and an equal score would
        # count as an improvement.
        self.variables = {name: tf.Variable(initial, trainable=False, name=name,
                                            dtype=tf.float64 if isinstance(initial, float)
                                            else tf.int64)
                          for name, initial in self.NAMES}

    def __getitem__(self, name):
        return self.variables[name]

    def value(self, name):
        """The current value of variable `name`, as a Python int or float."""
        return self.variables[name].numpy().item()


def append_history(run_dir, record: dict) -> None:
    """Appends one evaluation as a JSON line to `run_dir/history.jsonl`, which the reports and
    accuracy-over-steps plots read."""
    with open(Path(run_dir) / "history.jsonl", "a") as history:
        history.write(json.dumps(record) + "\n")


def keep_history_until(run_dir, step: int) -> None:
    """Drops the lines of `run_dir/history.jsonl` after `step` (those of evaluations that a
    resumed run makes again), and a line cut short by a process that died writing it."""
    path = Path(run_dir) / "history.jsonl"
    if path.exists():
        kept = []
        # Damaged bytes are read as U+FFFD (no UnicodeDecodeError): their line is then not
        # JSON, and is dropped like a line cut short.
        for line in path.read_text(errors="replace").splitlines(keepends=True):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if not isinstance(record, dict) or not isinstance(record.get("step"), int):
                print(f"warning: {path}: dropping a line that is not complete JSON: "
                      f"{line.strip()[:60]!r}", file=sys.stderr)
                continue
            if record["step"] <= step:
                kept.append(line if line.endswith("\n") else line + "\n")
        write_text_atomically(path, "".join(kept))


class ResumableCheckpoint(keras.callbacks.Callback):
    """Checkpoints everything an interrupted run needs to continue exactly.

    A `tf.train.Checkpoint` under `run_dir/checkpoints` with the model, the optimizer (its
    slots and step), the non-trainable variables (Keras' random-seed states: without them
    a resumed run would draw other dropout masks than an uninterrupted one; Keras'
    `BackupAndRestore` keeps weights and the epoch only) and the `TrainingProgress`.
    Saved every `every` steps (at the end of a `fit` epoch) and whenever `save()` is called.

    Args:
        model: the task model, compiled, its optimizer built.
        progress: the run's `TrainingProgress`.
        run_dir: the run directory.
        every: steps between checkpoints.
    """

    def __init__(self, model, progress: TrainingProgress, run_dir, every: int):
        super().__init__()
        self.every = int(every)
        self.checkpoint = tf.train.Checkpoint(
            model=model, optimizer=model.optimizer,
            non_trainable=[v.value for v in model.non_trainable_variables],
            **progress.variables)
        directory = Path(run_dir) / "checkpoints"
        _drop_damaged_state_file(directory)
        self.manager = tf.train.CheckpointManager(self.checkpoint, directory, max_to_keep=2)
        self._directory = directory
        self._model = model

    def restore(self) -> bool:
        """Restores the newest intact checkpoint, if any; True when one was restored.

        A checkpoint that cannot be read (a machine that died while writing it, a truncated
        or corrupt file) is skipped with a line on stderr saying which and why, and the one
        before it is restored: the run then repeats the steps in between exactly. When
        every checkpoint listed is unreadable, a `CheckpointError` says so.
        """
        # Those on disk too: the list in `checkpoints/checkpoint` lags a checkpoint whose
        # writer died before updating it, and is gone when that file was damaged.
        on_disk = [str(index.with_suffix("")) for index in self._directory.glob("ckpt-*.index")]
        candidates = sorted(set(self.manager.checkpoints) | set(on_disk),
                            key=lambda path: int(path.rsplit("-", 1)[1]), reverse=True)
        if not candidates:
            return False
        for path in candidates:
            try:
                self.checkpoint.restore(path).assert_existing_objects_matched()
                return True
            except (tf.errors.OpError, ValueError, IndexError, AssertionError) as error:
                reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
                print(f"warning: skipping checkpoint {path}: it cannot be read "
                      f"({type(error).__name__}: {reason})", file=sys.stderr)
        raise CheckpointError(f"no checkpoint in {Path(path).parent} can be read (tried "
                              f"{', '.join(Path(p).name for p in candidates)}); delete that "
                              "folder to train the run from its start")

    def save(self):
        """Writes a checkpoint numbered by the optimizer's step (the last two are kept),
        flushed to disk before the run goes on (`fsync`), so that a machine that dies after
        this returns does not leave a truncated checkpoint behind it."""
        path = self.manager.save(checkpoint_number=int(self._model.optimizer.iterations.numpy()))
        for name in [*tf.io.gfile.glob(f"{path}.*"), str(Path(path).parent / "checkpoint")]:
            _fsync(name)
        _fsync(str(Path(path).parent))

    def on_epoch_end(self, epoch, logs=None):
        if int(self._model.optimizer.iterations.numpy()) % self.every == 0:
            self.save()



class CheckpointError(RunDirectoryError):
    """A run directory none of whose checkpoints can be read."""


def _drop_damaged_state_file(directory: Path) -> None:
    """Removes `directory/checkpoint` (the list of checkpoints that `CheckpointManager`
    keeps) when it cannot be parsed, saying so; the checkpoints themselves are then found
    on disk (`ResumableCheckpoint.restore`).

    TensorFlow ignores a state file it cannot parse (a run would silently start again from
    step 0), raises a ValueError for an empty one, and a UnicodeDecodeError for damaged
    bytes: anything it raises here means the file is damaged.
    """
    state = directory / "checkpoint"
    if not state.exists():
        return
    try:
        readable = tf.train.get_checkpoint_state(str(directory)) is not None
    except Exception:  # noqa: BLE001 (see the docstring: any error is a damaged file)
        readable = False
    if not readable:
        print(f"warning: {state} is damaged: the checkpoints are looked for on disk instead",
              file=sys.stderr)
        state.unlink()


def _fsync(path: str) -> None:
    """Flushes a file (or a directory's entries) to disk."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_text_atomically(path, text: str) -> None:
    """Writes `text` to `path` through a temporary file in the same folder, flushed and
    renamed: a process killed while writing leaves the previous complete file, never half
    of the new one (a run's `config.json`, `metrics.json`, `history.jsonl`)."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    with open(partial, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)
    _fsync(str(path.parent))


def save_atomically(model, path) -> None:
    """`model.save(path)` through a temporary file in the same folder, flushed and renamed:
    `path` is always either the previous complete file or the new complete one."""
    path = Path(path)
    partial = path.with_name(f".{path.stem}.partial{path.suffix}")  # Keras wants the suffix
    model.save(partial)
    _fsync(str(partial))
    os.replace(partial, path)
    _fsync(str(path.parent))


class ModelSelection(keras.callbacks.Callback):
    """Model selection on a validation score, early stopping, and the step limit.

    Every `eval_every` steps (and at `max_steps`) it scores `validate(model)`: an accuracy
    (exact match for the sequence models), or {"accuracy", "loss"} where a lower validation
    loss breaks ties between equal accuracies (the toy tasks), or {"accuracy", "bleu"}
    (translation). The score selected on is the accuracy, or with `select_on="bleu"` the
    BLEU (0-100, kept as a fraction in the progress). It puts the accuracy in the logs as
    `val_accuracy`, appends a line to `run_dir/history.jsonl` (with `val_bleu` when scored),
    and on a new best calls `on_best()` (which saves the best model). Training stops
    at `max_steps`, at `stop_at_accuracy`, or after `patience` evaluations without
    improvement; the patience count lives in the `TrainingProgress`, which the checkpoint
    holds, so a restarted run keeps it (Keras' `EarlyStopping` starts over). A non-finite
    training loss stops the run with a `FloatingPointError`.

    Args:
        validate: `validate(model) -> accuracy` in [0, 1], or {"accuracy", "loss"}, or
            {"accuracy", "bleu"} (BLEU 0-100).
        progress: the run's `TrainingProgress`.
        run_dir: where `history.jsonl` goes.
        on_best: called after each new best score.
        eval_every, max_steps, patience, stop_at_accuracy: the training settings.
        select_on: "exact_match" (the accuracy), "bleu", or "last": no selection, every
            evaluation replaces the kept model, so the run ends with its last one (what the
            meta seq2seq authors' code tests); `stop_at_accuracy` still ends a run early,
            so set it above 1 to train every step.
    """

    def __init__(self, validate, progress: TrainingProgress, run_dir, on_best, eval_every: int,
                 max_steps: int, patience: int, stop_at_accuracy: float,
                 select_on: str = "exact_match"):
        super().__init__()
        self.select_on = select_on
        self.validate, self.progress, self.run_dir = validate, progress, Path(run_dir)
        self.on_best = on_best
        self.eval_every, self.max_steps = int(eval_every), int(max_steps)
        self.patience, self.stop_at_accuracy = int(patience), float(stop_at_accuracy)
        self._loss = float("nan")

    def _step(self) -> int:
        return int(self.model.optimizer.iterations.numpy())

    def on_train_begin(self, logs=None):
        self._started = time.perf_counter()
        self._elapsed_at_start = self.progress.value("elapsed_seconds")

    def on_train_batch_end(self, batch, logs=None):
        self._loss = float(logs["loss"])
        if not math.isfinite(self._loss):
            raise FloatingPointError(f"training loss became {self._loss} at step {self._step()}; "
                                     "lower the learning rate or the clip norm")
        if self._step() >= self.max_steps:
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        step, p = self._step(), self.progress
        p["elapsed_seconds"].assign(self._elapsed_at_start + time.perf_counter() - self._started)
        if step % self.eval_every and step < self.max_steps:
            return
        scores = self.validate(self.model)
        if not isinstance(scores, dict):
            scores = {"accuracy": scores}
        accuracy, loss = float(scores["accuracy"]), float(scores.get("loss", math.inf))
        if logs is not None:
            logs["val_accuracy"] = accuracy
        if self.select_on == "bleu" and "bleu" not in scores:
            raise ValueError("training.selection 'bleu' needs a translation task (its "
                             "validation has no BLEU score)")
        score = float(scores["bleu"]) / 100.0 if self.select_on == "bleu" else accuracy
        improved = (self.select_on == "last" or score > p.value("best_accuracy")
                    or (score == p.value("best_accuracy") and loss < p.value("best_loss")))
        if improved:
            p["best_accuracy"].assign(score)
            p["best_loss"].assign(loss)
            p["best_step"].assign(step)
            p["evaluations_since_best"].assign(0)
        else:
            p["evaluations_since_best"].assign_add(1)
        if (accuracy >= self.stop_at_accuracy or step >= self.max_steps
                or p.value("evaluations_since_best") >= self.patience):
            p["finished"].assign(1)
            self.model.stop_training = True
        record = {"step": step, "loss": round(self._loss, 5), "val_accuracy": accuracy}
        if "loss" in scores:
            record["val_loss"] = round(loss, 5)
        if "bleu" in scores:
            record["val_bleu"] = round(float(scores["bleu"]), 4)
        append_history(self.run_dir, {**record, "elapsed_s": round(p.value("elapsed_seconds"), 1)})
        # Saved last, with this evaluation complete (the finished flag, its history line):
        # a process killed after `on_best` checkpointed must not resume at this step as
        # unfinished, without its line (it would not evaluate it again, and a run stopped
        # here by `stop_at_accuracy` or patience would train on). Killed before, it resumes
        # from the previous checkpoint and repeats this evaluation, its line dropped first.
        if improved:
            self.on_best()
