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
# The training loss that `history.jsonl` and the progress lines report at step S is the
# mean loss of the updates S-99..S (of all updates before step 100). A fixed window makes
# it a property of the step: the same run logs the same loss at S whatever its eval_every
# or checkpoint_every (the mean since the previous evaluation would not be), and 100
# updates average out the noise of single batches while following the curve at the
# shortest evaluation interval the configurations use.
LOSS_WINDOW = 100


class TrainingProgress:
    """The run's selection state, as variables, so that it is checkpointed with the weights.

    `best_accuracy` (the best selection score: an accuracy, or BLEU / 100), `best_loss` (its
    tie-breaker), `best_step`, `evaluations_since_best`
    (patience), `finished` and `elapsed_seconds` (training time over every process of the run),
    and `recent_losses`: the training loss of each of the last `LOSS_WINDOW` updates, step
    S's at index (S - 1) % LOSS_WINDOW, NaN where there is none, so that a resumed run
    logs the loss an uninterrupted one does.
    """

    NAMES = (("best_step", 0), ("evaluations_since_best", 0), ("finished", 0),
             ("best_accuracy", -1.0), ("best_loss", float("inf")), ("elapsed_seconds", 0.0))
    # Variables that checkpoints written by earlier versions lack (restored without them).
    ADDED = ("recent_losses",)

    def __init__(self):
        # float64: a float32 best score of 0.7 is 0.699999988, and an equal score would
        # count as an improvement.
        self.variables = {name: tf.Variable(initial, trainable=False, name=name,
                                            dtype=tf.float64 if isinstance(initial, float)
                                            else tf.int64)
                          for name, initial in self.NAMES}
        self.variables["recent_losses"] = tf.Variable(
            tf.fill([LOSS_WINDOW], tf.constant(math.nan, tf.float64)), trainable=False,
            name="recent_losses")

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

    On JAX, whose variables TensorFlow's checkpoints cannot hold, the same state goes into
    `ckpt-<step>.npz` files instead (`ArrayCheckpoints`), the last two kept. A run directory
    holds one of the two kinds, and the other backend refuses to resume it.
    """

    def __init__(self, model, progress: TrainingProgress, run_dir, every: int):
        super().__init__()
        self.every = int(every)
        directory = Path(run_dir) / "checkpoints"
        self._directory, self._model = directory, model
        self._arrays = (ArrayCheckpoints(directory, model, progress)
                        if keras.backend.backend() == "jax" else None)
        if self._arrays is not None:
            return
        self._objects = dict(model=model, optimizer=model.optimizer,
                             non_trainable=[v.value for v in model.non_trainable_variables],
                             **progress.variables)
        self.checkpoint = tf.train.Checkpoint(**self._objects)
        _drop_damaged_state_file(directory)
        self.manager = tf.train.CheckpointManager(self.checkpoint, directory, max_to_keep=2)

    def restore(self) -> bool:
        """Restores the newest intact checkpoint, if any; True when one was restored.

        A checkpoint that cannot be read (a machine that died while writing it, a truncated
        or corrupt file) is skipped with a line on stderr saying which and why, and the one
        before it is restored: the run then repeats the steps in between exactly. When
        every checkpoint listed is unreadable, a `CheckpointError` says so.
        """
        _refuse_other_backend(self._directory)
        if self._arrays is not None:
            return self._arrays.restore()
        # Those on disk too: the list in `checkpoints/checkpoint` lags a checkpoint whose
        # writer died before updating it, and is gone when that file was damaged.
        on_disk = [str(index.with_suffix("")) for index in self._directory.glob("ckpt-*.index")]
        candidates = sorted(set(self.manager.checkpoints) | set(on_disk),
                            key=lambda path: int(path.rsplit("-", 1)[1]), reverse=True)
        if not candidates:
            return False
        for path in candidates:
            try:
                self._checkpoint_of(path).restore(path).assert_existing_objects_matched()
                return True
            except (tf.errors.OpError, ValueError, IndexError, AssertionError) as error:
                reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
                print(f"warning: skipping checkpoint {path}: it cannot be read "
                      f"({type(error).__name__}: {reason})", file=sys.stderr)
        raise CheckpointError(f"no checkpoint in {Path(path).parent} can be read (tried "
                              f"{', '.join(Path(p).name for p in candidates)}); delete that "
                              "folder to train the run from its start")

    def _checkpoint_of(self, path) -> tf.train.Checkpoint:
        """The checkpoint object that reads `path`: `self.checkpoint`, or for a checkpoint
        written before `TrainingProgress.ADDED` existed one without those variables (they
        keep their initial values: a run resumed from it logs the mean loss of the updates
        it has made since, until it has made `LOSS_WINDOW`)."""
        held = {name.split("/", 1)[0] for name in
                tf.train.load_checkpoint(path).get_variable_to_shape_map()}
        missing = [name for name in TrainingProgress.ADDED if name not in held]
        if not missing:
            return self.checkpoint
        return tf.train.Checkpoint(**{name: value for name, value in self._objects.items()
                                      if name not in missing})

    def save(self):
        """Writes a checkpoint numbered by the optimizer's step (the last two are kept),
        flushed to disk before the run goes on (`fsync`), so that a machine that dies after
        this returns does not leave a truncated checkpoint behind it."""
        if self._arrays is not None:
            return self._arrays.save(int(self._model.optimizer.iterations.numpy()))
        path = self.manager.save(checkpoint_number=int(self._model.optimizer.iterations.numpy()))
        for name in [*tf.io.gfile.glob(f"{path}.*"), str(Path(path).parent / "checkpoint")]:
            _fsync(name)
        _fsync(str(Path(path).parent))

    def on_epoch_end(self, epoch, logs=None):
        if int(self._model.optimizer.iterations.numpy()) % self.every == 0:
            self.save()



class CheckpointError(RunDirectoryError):
    """A run directory none of whose checkpoints can be read, or one trained on another
    Keras backend."""


# What each backend's checkpoints are called: TensorFlow's index files, `ArrayCheckpoints`'
# arrays.
_CHECKPOINT_FILES = {"tensorflow": "ckpt-*.index", "jax": "ckpt-*.npz"}


def _refuse_other_backend(directory: Path) -> None:
    """Raises `CheckpointError` when `directory` holds checkpoints of another backend: its
    weights and optimizer state would have to be read in another format, and its random
    draws (dropout, teacher forcing) came from another generator, so it cannot continue
    exactly."""
    backend = keras.backend.backend()
    for other, pattern in _CHECKPOINT_FILES.items():
        if other != backend and any(directory.glob(pattern)):
            raise CheckpointError(
                f"{directory.parent} was trained on the {other} backend and this process "
                f"runs {backend}: resume it with --backend {other}, or train it again in a "
                "new run directory")


class ArrayCheckpoints:
    """The checkpoints of a run on JAX: every variable's value in `ckpt-<step>.npz`.

    One file per checkpoint with the model's variables (weights and seed-generator
    states, in `model.variables` order; their number and shapes are checked on restore),
    the optimizer's (its step and slots) and the `TrainingProgress`; written to a temporary
    name, flushed and renamed, so a checkpoint on disk is always complete; the last two
    kept. What `ResumableCheckpoint` uses on JAX.

    Args:
        directory: the run's `checkpoints` folder.
        model: the compiled task model, its optimizer built.
        progress: the run's `TrainingProgress`.
    """

    KEEP = 2

    def __init__(self, directory, model, progress: TrainingProgress):
        self.directory, self.model, self.progress = Path(directory), model, progress

    def _groups(self):
        return {"model": self.model.variables, "optimizer": self.model.optimizer.variables}

    def paths(self) -> list[Path]:
        """The checkpoint files on disk, newest first."""
        return sorted(self.directory.glob("ckpt-*.npz"), reverse=True,
                      key=lambda path: int(path.stem.split("-", 1)[1]))

    def save(self, step: int) -> None:
        """Writes `ckpt-<step>.npz` and deletes all but the newest `KEEP`."""
        import numpy as np

        self.directory.mkdir(parents=True, exist_ok=True)
        arrays = {}
        for group, variables in self._groups().items():
            for i, variable in enumerate(variables):
                arrays[f"{group}/{i}"] = np.asarray(variable.value)
        for name, variable in self.progress.variables.items():
            arrays[f"progress/{name}"] = variable.numpy()
        path = self.directory / f"ckpt-{step}.npz"
        partial = path.with_name(f".{path.name}.partial")
        with open(partial, "wb") as handle:
            np.savez(handle, **arrays)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(partial, path)
        _fsync(str(self.directory))
        for old in self.paths()[self.KEEP:]:
            old.unlink()

    def restore(self) -> bool:
        """Restores the newest readable checkpoint (skipping, with a line on stderr, any
        that cannot be read or does not fit the model); True when one was restored."""
        import numpy as np

        candidates = self.paths()
        if not candidates:
            return False
        for path in candidates:
            try:
                with np.load(path) as stored:
                    arrays = {name: stored[name] for name in stored.files}
                updates = []
                for group, variables in self._groups().items():
                    # By position: a variable's path holds the names Keras numbers per
                    # process (a second model in one process is "..._1"), its position
                    # in `variables` does not change.
                    stored_count = sum(1 for name in arrays if name.startswith(f"{group}/"))
                    if stored_count != len(variables):
                        raise ValueError(f"it holds {stored_count} {group} variables, the "
                                         f"model {len(variables)}")
                    for i, variable in enumerate(variables):
                        value = arrays[f"{group}/{i}"]
                        if tuple(value.shape) != tuple(variable.shape):
                            raise ValueError(f"{variable.path} has shape {value.shape}, "
                                             f"the model's {variable.shape}")
                        updates.append((variable, value))
                progress = [(variable, arrays[f"progress/{name}"]) for name, variable in
                            self.progress.variables.items() if f"progress/{name}" in arrays]
            except (OSError, ValueError, KeyError, EOFError) as error:
                reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
                print(f"warning: skipping checkpoint {path}: it cannot be read "
                      f"({type(error).__name__}: {reason})", file=sys.stderr)
                continue
            for variable, value in updates + progress:
                variable.assign(value)
            return True
        raise CheckpointError(f"no checkpoint in {self.directory} can be read (tried "
                              f"{', '.join(p.name for p in candidates)}); delete that "
                              "folder to train the run from its start")


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
    `val_accuracy` and the training loss of the last `LOSS_WINDOW` updates as `loss`, appends
    a line to `run_dir/history.jsonl` (with `val_bleu` when scored), hands it to `report`,
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
        report: a `RunReport` that shows the run's progress, or None.
    """

    def __init__(self, validate, progress: TrainingProgress, run_dir, on_best, eval_every: int,
                 max_steps: int, patience: int, stop_at_accuracy: float,
                 select_on: str = "exact_match", report=None):
        super().__init__()
        self.select_on = select_on
        self.validate, self.progress, self.run_dir = validate, progress, Path(run_dir)
        self.on_best, self.report = on_best, report
        self.eval_every, self.max_steps = int(eval_every), int(max_steps)
        self.patience, self.stop_at_accuracy = int(patience), float(stop_at_accuracy)
        self._recent = progress["recent_losses"].numpy().copy()
        self._loss_metric = None
        self._steps = None

    def _step(self) -> int:
        # On JAX counted from the step `fit` started at: the variables are detached from the
        # model between a fit epoch's first and last batch (Keras' JAX trainer), so the
        # optimizer's step cannot be read there.
        if self._steps is not None and keras.backend.backend() == "jax":
            return self._steps
        return int(self.model.optimizer.iterations.numpy())

    def recent_loss(self, step: int) -> float:
        """The mean training loss of the updates step-LOSS_WINDOW+1..step that this run has
        the losses of (NaN if none); `math.fsum`, so the order they were added in does not
        show in the last bit."""
        known = [value for value in (self._recent[(s - 1) % LOSS_WINDOW]
                                     for s in range(max(1, step - LOSS_WINDOW + 1), step + 1))
                 if not math.isnan(value)]
        return math.fsum(known) / len(known) if known else math.nan

    def on_train_begin(self, logs=None):
        self._steps = int(self.model.optimizer.iterations.numpy())
        self._started = time.perf_counter()
        self._elapsed_at_start = self.progress.value("elapsed_seconds")
        self._recent = self.progress["recent_losses"].numpy().copy()  # as restored
        # Keras' "loss" metric is the mean over the fit epoch so far; emptied before every
        # batch, it gives each update's own loss, whatever the epoch's length. The library's
        # own step (`TrainStep`, compiled by `fit_run`) logs that loss as "update_loss", on
        # every backend (on JAX the metric's variables are out of reach between batches).
        self._loss_metric = (None if getattr(self.model, "log_update_loss", False) else
                             next((m for m in self.model.metrics if m.name == "loss"), None))

    def on_train_batch_begin(self, batch, logs=None):
        if self._loss_metric is not None:
            self._loss_metric.reset_state()

    def on_train_batch_end(self, batch, logs=None):
        if self._steps is not None:
            self._steps += 1
        step, loss = self._step(), float(logs.get("update_loss", logs["loss"]))
        if not math.isfinite(loss):
            raise FloatingPointError(f"training loss became {loss} at step {step}; "
                                     "lower the learning rate or the clip norm")
        if step >= 1:
            self._recent[(step - 1) % LOSS_WINDOW] = loss
        if self.report is not None:
            self.report.step(step, lambda: self.recent_loss(step))
        if step >= self.max_steps:
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        step, p = self._step(), self.progress
        p["elapsed_seconds"].assign(self._elapsed_at_start + time.perf_counter() - self._started)
        # Before anything checkpoints (`on_best`, `ResumableCheckpoint` after this callback).
        p["recent_losses"].assign(self._recent)
        loss_of_window = self.recent_loss(step)
        if logs is not None:
            logs["loss"] = loss_of_window  # what TensorBoard's epoch_loss shows, too
            logs.pop("update_loss", None)  # the last update's alone: not the epoch's
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
        record = {"step": step, "loss": round(loss_of_window, 5), "val_accuracy": accuracy}
        if "loss" in scores:
            record["val_loss"] = round(loss, 5)
        if "bleu" in scores:
            record["val_bleu"] = round(float(scores["bleu"]), 4)
        record["elapsed_s"] = round(p.value("elapsed_seconds"), 1)
        append_history(self.run_dir, record)
        if self.report is not None:
            self.report.evaluation(record)
        # Saved last, with this evaluation complete (the finished flag, its history line):
        # a process killed after `on_best` checkpointed must not resume at this step as
        # unfinished, without its line (it would not evaluate it again, and a run stopped
        # here by `stop_at_accuracy` or patience would train on). Killed before, it resumes
        # from the previous checkpoint and repeats this evaluation, its line dropped first.
        if improved:
            self.on_best()


class RunReport:
    """What a run shows while it trains, on `stream` (default: standard output).

    One line for each evaluation, the `history.jsonl` record's numbers:
    `step 200/500  loss 1.3870  val_accuracy 0.8500  elapsed 12.3 s` (with `val_loss` and
    `val_bleu` when scored). On a terminal (`stream.isatty()`), below those lines, one bar
    for the whole run: its total is `max_steps`, it starts at `start_step` (a resumed run's
    checkpoint), and it shows the loss of the last `LOSS_WINDOW` updates and the time left
    at this process's pace (evaluations included, the first update's tracing not). Output
    that is not a terminal (a log file, a pipe) gets the evaluation lines only: no carriage
    return, backspace or terminal escape code.

    Args:
        max_steps: the run's length in steps.
        start_step: the step this process starts at.
        stream: where to write (default: `sys.stdout` at construction).
    """

    # Redrawing the bar at every step would cost more than a small model's step.
    REDRAW_SECONDS = 0.2
    BAR_WIDTH = 30

    def __init__(self, max_steps: int, start_step: int = 0, stream=None):
        self.stream = stream if stream is not None else sys.stdout
        self.max_steps, self.start_step = int(max_steps), int(start_step)
        isatty = getattr(self.stream, "isatty", None)
        self.bar = bool(isatty and isatty())
        # (time, step) at the end of this process's first update: the pace is measured from
        # there, without the first update's tracing.
        self._clock = None
        self._drawn_at = -math.inf
        self._shown = 0  # characters of the bar on the screen's last line
        self._step, self._loss = self.start_step, math.nan

    def step(self, step: int, loss) -> None:
        """After each update: redraws the bar (on a terminal, at most every
        `REDRAW_SECONDS`); `loss()` gives the loss to show, computed only then."""
        if not self.bar:
            return
        self._step = step
        now = time.perf_counter()
        if self._clock is None:
            self._clock = (now, step)
        if now - self._drawn_at >= self.REDRAW_SECONDS or step >= self.max_steps:
            self._loss = loss()
            self._draw(now)

    def evaluation(self, record: dict) -> None:
        """Writes the line of one evaluation (a `history.jsonl` record), above the bar."""
        parts = [f"step {record['step']}/{self.max_steps}", f"loss {record['loss']:.4f}",
                 f"val_accuracy {record['val_accuracy']:.4f}"]
        parts += [f"{key} {record[key]:.4f}" for key in ("val_loss", "val_bleu")
                  if key in record]
        parts.append(f"elapsed {record['elapsed_s']} s")
        self._clear()
        self.stream.write("  ".join(parts) + "\n")
        if self.bar:
            self._step, self._loss = record["step"], record["loss"]
            self._draw(time.perf_counter())
        self.stream.flush()

    def close(self) -> None:
        """Ends the bar's line (call once training is over)."""
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = 0

    def _draw(self, now: float) -> None:
        done = min(self._step, self.max_steps) / max(self.max_steps, 1)
        filled = int(done * self.BAR_WIDTH)
        bar = "=" * filled + (">" if filled < self.BAR_WIDTH else "")
        line = (f"{self._step}/{self.max_steps} [{bar:<{self.BAR_WIDTH}}] {done:4.0%}"
                f"  loss {self._loss:.4f}")
        if self._clock is not None and self._clock[1] < self._step < self.max_steps:
            started, first = self._clock
            left = (now - started) / (self._step - first) * (self.max_steps - self._step)
            line += f"  ETA {_duration(left)}"
        self.stream.write("\r" + line.ljust(self._shown))
        self.stream.flush()
        self._shown, self._drawn_at = len(line), now

    def _clear(self) -> None:
        if self._shown:
            self.stream.write("\r" + " " * self._shown + "\r")
            self._shown = 0


def _duration(seconds: float) -> str:
    """`seconds` as H:MM:SS, or M:SS under an hour."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
