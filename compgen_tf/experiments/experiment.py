"""`Experiment`: what every kind of task (a SCAN split, meta-learning episodes, a toy task)
provides to the commands, so that `train`, `evaluate`, `reproduce` and `tune` are written once.

Each registered model names its kind of experiment (`compgen_tf.registry.MODELS[name].trains_on`,
its object `compgen_tf.experiments.kinds.experiment_for(name)`):
`compgen_tf.experiments.scan.SCAN`, `compgen_tf.experiments.episodes.EPISODES` or
`compgen_tf.experiments.toy.TOY`. A run directory (`config.json`, `checkpoints/`,
`best_model.keras`, `history.jsonl`, `logs/`, `metrics.json`) has the same layout for all.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import math
import os
import shutil
import sys
import time
import zipfile
from pathlib import Path

import keras

from compgen_tf.errors import CorruptRunFileError, RunDirectoryError
from compgen_tf.experiments.config import (CONFIG_DIR, SECTIONS, ConfigError, apply_overrides,
                                           comparable, config_differences, config_path,
                                           load_config, normalised_config, unrecorded_provenance)
from compgen_tf.experiments.run_config import DataConfig, RunConfig
from compgen_tf.training.settings import TrainingConfig

WARM_START = "warm_start.json"


class Experiment:
    """How runs of one kind of task are configured, built, trained, scored and reported.

    The run itself is written once, here (`train`: the run directory, resume, `fit`, model
    selection, the final scores, `metrics.json`; `evaluate`: a finished run scored again). A
    kind of experiment supplies only what differs: its data (`training_data`), its model
    (`new_model`), its batches and validation score (`batches`, `validation_score`), its final
    scores (`score`), and what its configurations may hold.

    Subclasses set `kind` ("scan", "episodes" or "toy"), `task_key` (the configuration key
    that names the task: "split" for SCAN and episodes, "task" for the toy tasks),
    `drops_once` (what the learning-rate decay keys mean, see `TrainingConfig`),
    `training_defaults` (where its trainer's defaults differ from `TrainingConfig`'s) and
    implement the methods that raise `NotImplementedError` here.
    """

    kind: str = ""
    task_key: str = "split"
    drops_once: bool = False
    training_defaults: dict = {}

    # ------------------------------------------------------------------ configuration

    def resolve_config(self, model: str, task: str, config_file=None, overrides=(),
                       steps: int | None = None, epochs: float | None = None) -> RunConfig:
        """The configuration of `model` on `task` (default file `configs/<model>/<task>.json`)
        with `overrides` ("section.key=value"), `steps` (training.max_steps) or `epochs`
        (passes over the training data) applied, as a `RunConfig`; a `ConfigError` names
        what is wrong (before any run directory is written).
        """
        self.check_task(model, task)
        path = Path(config_file or config_path(model, task))
        chosen = load_config(path)
        if path.is_absolute() and path.resolve().is_relative_to(CONFIG_DIR.resolve()):
            # a committed file, named as typed from the repository root wherever it is installed
            path = Path("configs") / path.resolve().relative_to(CONFIG_DIR.resolve())
        overrides = list(overrides)
        if steps is not None:
            overrides.append(f"training.max_steps={steps}")
        given = apply_overrides(chosen, overrides)
        given.pop("split", None)
        given.pop("task", None)
        given.update({"model": model, self.task_key: task})
        # How the settings were chosen is the file's to say; what the command line changed
        # was chosen by whoever typed it, which no file records.
        changed = config_differences({s: chosen[s] for s in SECTIONS},
                                     {s: given[s] for s in SECTIONS})
        if changed:
            given["provenance"] = unrecorded_provenance(
                f"{path} changed on the command line ({'; '.join(changed)})")
        given.setdefault("provenance", unrecorded_provenance(
            f"{path} does not say how its settings were chosen"))
        config = self.run_config(given, origin=str(path))
        if epochs is not None:
            steps = max(1, math.ceil(epochs * self.fit_examples(config)
                                     / config.training.batch_size))
            config = config.with_training(max_steps=steps)
        return config

    def run_config(self, config: dict, origin: str = "configuration") -> RunConfig:
        """The `RunConfig` of `config`, a dict in the configuration file's form with its
        `model` and task key (a run's `config.json`, a trial's configuration): the
        settings resolved over this kind's defaults and every check made once."""
        if isinstance(config, RunConfig):
            return config
        # Types here; the ranges where the typed sections are built, below.
        given = normalised_config(config, origin=origin)
        model, task = given.get("model"), given.get(self.task_key)
        if model is None or task is None:
            raise ConfigError(f"{origin}: a run's configuration names its 'model' and its "
                              f"{self.task_key!r}")
        training = TrainingConfig.from_section(given["training"], self.training_defaults,
                                               drops_once=self.drops_once, origin=origin)
        run = RunConfig(model=model, task=task, task_key=self.task_key,
                        model_args=given["model_args"], training=training,
                        data=DataConfig.from_section(given["data"], origin=origin),
                        given={"training": given["training"], "data": given["data"]},
                        notes=given.get("notes"), provenance=given.get("provenance"))
        if training.selection == "bleu" and not self.scores_bleu(task):
            raise ConfigError(f"training.selection 'bleu' needs a translation split (mt_*); "
                              f"{model} on {task} is scored by exact match")
        self.check_model_args(run)
        self.check_data(run)
        return run

    def scores_bleu(self, task: str) -> bool:
        """Whether runs on `task` are scored with BLEU (the English-French splits)."""
        return False

    def check_task(self, model: str, task: str) -> None:
        """Raises a `ConfigError` unless `task` is one of `model`'s registered tasks."""
        from compgen_tf import registry

        tasks = registry.spec(model).tasks
        if task not in tasks:
            raise ConfigError(f"model {model!r} does not train on {task!r}; its tasks: "
                              f"{', '.join(tasks)}")

    def check_model_args(self, config: RunConfig) -> None:
        """A `ConfigError` for a model_args key that the model does not take. Values are
        checked where the model is built, once, before the run directory is written."""
        known = self.model_arg_names(config.model, config.task)
        unknown = sorted(set(config.model_args) - set(known))
        if unknown:
            raise ConfigError(f"model_args of {config.model}: unknown argument(s) "
                              f"{', '.join(unknown)}; it takes: {', '.join(sorted(known))}")

    def check_data(self, config: RunConfig) -> None:
        """A `ConfigError` for a data setting this experiment kind cannot use."""
        if "test_support_sets" in config.given["data"]:
            raise ConfigError(f"data.test_support_sets applies to meta seq2seq's length tasks, "
                              f"not to {config.model}")
        if "folder_sha256" in config.given["data"] and not self.is_data_folder(config.task):
            raise ConfigError(f"data.folder_sha256 records the files of a data folder; "
                              f"{config.task!r} is not one")

    def is_data_folder(self, task: str) -> bool:
        """Whether `task` names a data folder of the user's (`tfds_scan.folder_pairs`)
        rather than a built-in split or task. Default: never."""
        return False

    def run_name(self, task: str) -> str:
        """The name that run directories and results files of `task` take by default
        (`runs/<model>/<name>/seed<N>`, `results/<model>/<name>.json`): the task itself;
        a data folder's own name (`ScanExperiment`), never its path."""
        return task

    def model_arg_names(self, model: str, task: str) -> set[str]:
        """The model_args keys that `model` accepts on `task`."""
        raise NotImplementedError

    def check_model_values(self, config: RunConfig) -> None:
        """A `ConfigError` unless the model of `config` builds from its model_args (a search
        space's values are checked so before a search starts)."""
        try:
            self.new_model(config, None)  # a kind whose model reads its data overrides this
        except (ValueError, TypeError) as error:
            raise ConfigError(f"model_args of {config.model}: {error}") from error

    # ---------------------------------------------------------------- what a kind supplies

    def training_data(self, config: RunConfig, seed: int):
        """What training reads, read before the model is built: the training examples, the
        validation carve, and whatever the model's vocabularies come from."""
        raise NotImplementedError

    def new_model(self, config: RunConfig, data) -> keras.Model:
        """The task model of `config` on `data`, from the current random state."""
        raise NotImplementedError

    def prepare(self, model, config: RunConfig, data, run_dir: Path, seed: int,
                strategy) -> dict:
        """What a run does between building its model and training it; returns entries for
        the run's metrics. Default: nothing."""
        return {}

    def batches(self, model, config: RunConfig, data, seed: int):
        """The step-indexed training batches of the run (`compgen_tf.training.batches`)."""
        raise NotImplementedError

    def validation_score(self, model, config: RunConfig, data):
        """`validate(model)`: the score that model selection maximises (see `fit_run`)."""
        raise NotImplementedError

    def score(self, model, config: RunConfig, seed: int, parts, run_dir: Path,
              verbose: int = 1, data=None) -> dict:
        """The final scores of `model` on `parts`: {"accuracy": {part: value}, ...}, and each
        part's wrong answers in `run_dir/errors_<part>.jsonl` where the kind keeps them.
        `data`: the run's `training_data`, when it has it (else what is needed is read)."""
        raise NotImplementedError

    def evaluated_parts(self, config: RunConfig) -> tuple:
        """The parts scored at the end of a run by default."""
        return ("validation",) + self.test_parts(config)

    def rescored_parts(self, config: RunConfig) -> tuple:
        """The parts that `evaluate` scores on a finished run by default, and the only ones
        it accepts: "train" (the run's training data less its validation carve),
        "validation" and "test" (every test split of the task)."""
        return ("train", "validation", "test")

    # ------------------------------------------------------------------------ runs

    def build(self, config: RunConfig, seed: int = 0) -> keras.Model:
        """The task model of `config`, initialised from `seed` exactly as a run builds it."""
        data = self.training_data(config, seed)
        keras.utils.set_random_seed(seed)
        return self.new_model(config, data)

    def train(self, config: RunConfig, run_dir, seed: int = 0, verbose: int = 1,
              command: str = "", evaluate_splits=None, warm_start_from=None, model=None,
              strategy=None, data=None) -> dict | None:
        """Trains `config` into `run_dir` with `fit` (resuming it if interrupted), then scores
        `evaluate_splits` (default `evaluated_parts`); returns the metrics.

        The one run of every kind: the configuration and the data are read, the model is
        built (a bad model argument is a `ConfigError` before anything is written), the run
        directory records `config.json` (a directory holding another configuration is a
        `RunDirectoryError`), `fit_run` trains and selects, the best model is scored, `metrics.json`
        is written. A finished run (`finished`) is returned as it is.

        Args:
            config: the run's `RunConfig` (`resolve_config`, `run_config`).
            run_dir: the run directory; resumed when it holds a checkpoint.
            seed: the seed of the initial weights, the data order and the random draws.
            verbose: 0 silent; 1 the progress of training (`RunReport`) and the scores.
            command: the command line, recorded in the metrics.
            evaluate_splits: the parts scored after training (tuning leaves out the tests).
            warm_start_from: a finished run of the same configuration with fewer steps (a
                Hyperband trial's parent) whose last checkpoint this run continues, up to its
                own `max_steps` (used only when `run_dir` has no checkpoint yet).
            model: the task model to train, built by `build(config, seed)` (a keras-tuner
                trial builds it first); default: built here the same way.
            strategy: a `tf.distribute` strategy (`compgen_tf.training.distribute`). Under
                `multi_worker` only the chief writes `run_dir` and scores; every other worker
                keeps its checkpoints in `run_dir/.worker<N>` until training ends, and
                returns None.
            data: the run's `training_data(config, seed)`, when the caller has it.
        """
        import tensorflow as tf

        from compgen_tf.training.distribute import is_chief, wait_for_workers, worker_index
        from compgen_tf.training.fit import fit_run

        if not isinstance(config, RunConfig):
            raise TypeError(f"config must be a RunConfig (Experiment.resolve_config or "
                            f"run_config), got {type(config).__name__}")
        run_dir = Path(run_dir)
        strategy = strategy or tf.distribute.get_strategy()
        own_dir = run_dir if is_chief(strategy) else run_dir / f".worker{worker_index(strategy)}"
        record = config.to_json(seed)
        check_run_dir(own_dir, record)
        refuse_if_locked(own_dir)
        previous = read_metrics(run_dir)
        if self.finished(previous, config):
            try:  # a finished run whose best model is damaged or gone says so
                check_best_model(run_dir)
            except FileNotFoundError as error:
                raise CorruptRunFileError(
                    f"{run_dir} is a finished run but its best model is missing ({error}); "
                    f"its checkpoints hold the last weights, not the selected ones: train "
                    f"the run again into another --output") from error
            print(f"{run_dir} is finished: not trained again")
            return previous
        if data is None:
            data = self.training_data(config, seed)
        if model is None:
            # Seeded right before the model is built: reading the data may draw from the
            # global random generators (TFDS builds a dataset on first use), and the initial
            # weights must not depend on whether this process built it.
            keras.utils.set_random_seed(seed)
            with strategy.scope():
                try:
                    model = self.new_model(config, data)
                except (ValueError, TypeError) as error:
                    raise ConfigError(f"model_args of {config.model}: {error}") from error
        own_dir.mkdir(parents=True, exist_ok=True)
        with run_dir_lock(own_dir), full_disk_named(own_dir):
            prepare_run_dir(own_dir, record)
            extend = start_from(warm_start_from, own_dir)
            extra = self.prepare(model, config, data, own_dir, seed, strategy)
            summary = fit_run(model, config.training, own_dir,
                              self.batches(model, config, data, seed),
                              self.validation_score(model, config, data), seed=seed,
                              strategy=strategy, verbose=verbose, extend=extend)
            summary.update(extra)
            if own_dir == run_dir:
                parts = (self.evaluated_parts(config) if evaluate_splits is None
                         else evaluate_splits)
                metrics = self._scored(load_run_model(run_dir, into=model), config, seed,
                                       parts, run_dir, verbose, data)
                account_warm_start(run_dir, summary, metrics)
                metrics.update(summary, command=command)
                write_metrics(run_dir, metrics)
        if own_dir != run_dir:
            shutil.rmtree(own_dir)
            wait_for_workers(strategy)
            return None
        wait_for_workers(strategy)
        return metrics

    def evaluate(self, run_dir, splits=None, verbose: int = 1) -> dict:
        """Scores a run's best model on `splits` (default `rescored_parts`) again; scores
        of other parts stay. Updates and returns its metrics."""
        run_dir = Path(run_dir)
        record = run_config(run_dir)
        config = self.recorded_run_config(run_dir, record)
        with run_dir_lock(run_dir), full_disk_named(run_dir):
            model = load_run_model(run_dir)
            parts = self.rescored_parts(config) if splits is None else splits
            metrics = self._scored(model, config, record["seed"], parts, run_dir, verbose)
            write_metrics(run_dir, metrics)
        return metrics

    def recorded_run_config(self, run_dir, record: dict | None = None) -> RunConfig:
        """The `RunConfig` that a run directory's `config.json` records (a command that reads
        a finished run; a run itself never reads its record back). `record`: that file's
        contents, when the caller has read it."""
        record = run_config(run_dir) if record is None else record
        return self.run_config({key: value for key, value in record.items() if key != "seed"},
                               origin=str(Path(run_dir) / "config.json"))

    def _scored(self, model, config, seed, parts, run_dir, verbose, data=None) -> dict:
        """The run's metrics with the scores of `parts` laid over those it holds."""
        from compgen_tf.versions import package_versions

        metrics = read_metrics(run_dir)
        started = time.perf_counter()
        for key, values in self.score(model, config, seed, parts, run_dir, verbose,
                                      data).items():
            # Scores of parts not scored this time stay (`evaluate --splits validation` on a
            # finished run keeps its test score).
            metrics[key] = {**metrics.get(key, {}), **values}
        metrics.update({"model": config.model, config.task_key: config.task, "seed": seed,
                        "evaluation_time_s": round(time.perf_counter() - started, 1),
                        "backend": keras.backend.backend(), "versions": package_versions()})
        return metrics

    def fit_examples(self, config: RunConfig) -> int:
        """Examples of the training data of `config` less its validation carve."""
        raise NotImplementedError

    def steps_per_epoch(self, config: RunConfig) -> int:
        """Training steps of one pass over the data of `config` (a tuning budget's epoch)."""
        return max(1, math.ceil(self.fit_examples(config) / config.training.batch_size))

    def test_parts(self, config: RunConfig) -> tuple:
        """The test splits scored at the end of a run."""
        return ("test",)

    def finished(self, metrics: dict, config: RunConfig) -> bool:
        """Whether `metrics` (a run's metrics.json) is the record of a finished, tested run."""
        accuracy = metrics.get("accuracy", {})
        return ("wall_time_s" in metrics and "steps" in metrics
                and all(part in accuracy for part in self.test_parts(config)))

    # ---------------------------------------------------------------------- results

    def results_names(self, config: RunConfig, name: str) -> list[str]:
        """The results files (`results/<model>/<file>.json`) of the seeds run as `name`."""
        return [name]

    def results_records(self, config: RunConfig, name: str, metrics_list, run_dirs) -> dict:
        """{results file name: one record per seed} (see `compgen_tf.experiments.results`)."""
        from compgen_tf.experiments.results import run_record

        return {name: [run_record(m, d) for m, d in zip(metrics_list, run_dirs)]}

    def recorded_config(self, record: dict) -> dict:
        """The part of a configuration's JSON form (`RunConfig.to_json()`, a results file's
        `config`) that a results file records (and refuses to mix)."""
        return record


LOCK = ".lock"


@contextlib.contextmanager
def run_dir_lock(run_dir):
    """Holds `run_dir`'s lock (`run_dir/.lock`) while a command writes the directory.

    A second writer (another `train`, or `evaluate`, on the same directory) gets a
    `RunDirectoryError` naming the holder's process id. The lock is the operating system's
    (`flock`): a process that dies releases it, and the next writer takes it over, saying so
    (the file still names the dead process; a clean release empties it).
    """
    path = Path(run_dir) / LOCK
    handle = open(path, "a+")
    _take_lock(handle, run_dir)
    try:
        handle.seek(0)
        previous = handle.read().strip()
        if previous and previous != str(os.getpid()):
            print(f"{run_dir}: taking over the lock of process {previous}, which ended "
                  f"without releasing it", file=sys.stderr)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        yield
    finally:
        handle.seek(0)
        handle.truncate()
        handle.flush()
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def _take_lock(handle, run_dir) -> None:
    """`flock`s the open lock file `handle`, or closes it and raises the `RunDirectoryError`
    that names the process holding it."""
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise RunDirectoryError(f"{run_dir} is being written by process {holder} (it holds "
                                f"{Path(run_dir) / LOCK}); wait for it to finish, or pass "
                                f"another --output") from None


def refuse_if_locked(run_dir) -> None:
    """The `RunDirectoryError` of `run_dir_lock` now, when another writer holds `run_dir`'s
    lock; otherwise nothing, the lock file untouched. A second writer is refused before it
    reads its data (building a dataset for the first time prints TFDS's progress), the lock
    itself is taken where the run starts writing."""
    path = Path(run_dir) / LOCK
    if not path.exists():
        return
    with open(path) as handle:
        _take_lock(handle, run_dir)
        fcntl.flock(handle, fcntl.LOCK_UN)


def read_run_file(path) -> dict:
    """The JSON object in `path`, a file of a run directory (`config.json`, `metrics.json`);
    a `CorruptRunFileError` naming it when it is cut short or damaged."""
    from compgen_tf.experiments.results import read_json_object

    path = Path(path)
    return read_json_object(path, _DAMAGED_ADVICE[path.name], CorruptRunFileError)


# What to do about a damaged file, by name (`read_run_file`).
_DAMAGED_ADVICE = {
    "config.json": "the run's configuration is lost: train it again into another --output",
    "metrics.json": "delete it and run the same train command again: a finished run is "
                    "scored again from its best model, an unfinished one resumes",
}


@contextlib.contextmanager
def full_disk_named(run_dir):
    """Turns a full disk (or quota) met while a run writes `run_dir` into a
    `RunDirectoryError`, one line naming the file: every file the run writes is written
    aside and renamed, or checkpointed, so the last checkpoint is intact and the same
    command resumes from it once there is space. Python's writes raise an `OSError`;
    TensorFlow's (checkpoints, TensorBoard) an `OpError` that says so in its message."""
    import tensorflow as tf

    full = (errno.ENOSPC, errno.EDQUOT)
    try:
        yield
    except OSError as error:
        if error.errno not in full:
            raise
        where = error.filename or run_dir
        raise RunDirectoryError(f"{where}: {error.strerror} while writing the run; its last "
                                f"checkpoint is kept: free some space and run the same "
                                f"command again") from None
    except tf.errors.OpError as error:
        if os.strerror(errno.ENOSPC) not in str(error):
            raise
        raise RunDirectoryError(f"{run_dir}: {os.strerror(errno.ENOSPC)} while writing a "
                                f"checkpoint; the last complete one is kept: free some space "
                                f"and run the same command again") from None


def read_metrics(run_dir) -> dict:
    """A run directory's `metrics.json`, or {} when it has none yet; a
    `CorruptRunFileError` when it is damaged."""
    path = Path(run_dir) / "metrics.json"
    return read_run_file(path) if path.exists() else {}


def write_metrics(run_dir, metrics: dict) -> None:
    """Writes a run directory's `metrics.json` (atomically: a process killed meanwhile
    leaves the previous file)."""
    from compgen_tf.training.callbacks import write_text_atomically

    write_text_atomically(Path(run_dir) / "metrics.json", json.dumps(metrics, indent=2) + "\n")


def check_run_dir(run_dir, resolved: dict) -> None:
    """A `RunDirectoryError` when `run_dir` holds a run of another configuration than
    `resolved`."""
    config_file = Path(run_dir) / "config.json"
    if config_file.exists():
        previous = read_run_file(config_file)
        if comparable(previous) != comparable(resolved):
            raise RunDirectoryError(f"{run_dir} holds a run with a different configuration; pass "
                             f"another --output or delete it (differences: "
                             f"{config_differences(comparable(previous), comparable(resolved))})")


def prepare_run_dir(run_dir, resolved: dict) -> None:
    """Creates `run_dir` with `config.json`; refuses a directory holding another configuration
    (`check_run_dir`). The same run's `config.json` keeps the notes it was started with."""
    run_dir = Path(run_dir)
    check_run_dir(run_dir, resolved)
    config_file = run_dir / "config.json"
    if not config_file.exists():
        from compgen_tf.training.callbacks import write_text_atomically

        run_dir.mkdir(parents=True, exist_ok=True)
        write_text_atomically(config_file, json.dumps(resolved, indent=2) + "\n")


def start_from(warm_start_from, run_dir) -> bool:
    """Copies `warm_start_from`'s checkpoint into `run_dir` when this run has none yet;
    returns whether `fit_run` must extend it (see `copy_checkpoint`): also when a process
    that started the warm start died before the run saved a checkpoint of its own, which
    would otherwise restore the parent's "finished" and train nothing."""
    run_dir = Path(run_dir)
    if warm_start_from is None:
        return False
    if not (run_dir / "checkpoints").exists():
        copy_checkpoint(warm_start_from, run_dir)
        return True
    warm_start_file = run_dir / WARM_START
    if not warm_start_file.exists():
        return False
    return latest_checkpoint_step(run_dir / "checkpoints") == json.loads(
        warm_start_file.read_text())["step"]


def latest_checkpoint_step(directory) -> int | None:
    """The step of the newest checkpoint in a run's `checkpoints` folder, on either backend
    (TensorFlow's `ckpt-<step>.index`, JAX's `ckpt-<step>.npz`), or None when it has none."""
    steps = [int(path.name.split("-", 1)[1].split(".", 1)[0])
             for pattern in ("ckpt-*.index", "ckpt-*.npz")
             for path in Path(directory).glob(pattern)]
    return max(steps) if steps else None


def account_warm_start(run_dir, summary: dict, metrics: dict) -> None:
    """A warm-started run reports its own training time (without its parent's, which its
    checkpoint carried) and records where it started (`metrics["warm_start"]`)."""
    warm_start_file = Path(run_dir) / WARM_START
    if not warm_start_file.exists():
        return
    warm_start = json.loads(warm_start_file.read_text())
    summary["wall_time_s"] = round(summary["wall_time_s"] - warm_start["wall_time_s"], 1)
    metrics["warm_start"] = warm_start


def copy_checkpoint(source_run, run_dir) -> dict:
    """Copies a finished run's checkpoints, best model and history into `run_dir`, so that a
    longer run continues from there. Writes and returns `run_dir/warm_start.json`:
    {"from": source_run, "step": the checkpoint's step, "wall_time_s": the training time
    its checkpoint carries (the parent's own and, for a run that was itself continued, its
    parent's), "commit": the commit that trained the parent}. The checkpoints are copied
    aside and renamed into place after the record is written, so a process killed meanwhile
    leaves either no checkpoints or both."""
    from compgen_tf.training.callbacks import BEST_MODEL

    source_run, run_dir = Path(source_run), Path(run_dir)
    step = latest_checkpoint_step(source_run / "checkpoints")
    if step is None:
        raise RunDirectoryError(f"{source_run} has no checkpoint to continue from")
    partial = run_dir / "checkpoints.partial"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.copytree(source_run / "checkpoints", partial)
    for name in (BEST_MODEL, "history.jsonl"):
        if (source_run / name).exists():
            shutil.copy2(source_run / name, run_dir / name)
    parent = read_metrics(source_run)
    parent_time = (parent.get("wall_time_s", 0.0)
                   + parent.get("warm_start", {}).get("wall_time_s", 0.0))
    record = {"from": str(source_run), "step": step, "wall_time_s": parent_time,
              "commit": parent.get("versions", {}).get("commit")}
    (run_dir / WARM_START).write_text(json.dumps(record) + "\n")
    partial.rename(run_dir / "checkpoints")
    return record


def load_run_model(run_dir, into=None):
    """The best model of a run directory.

    `into`: the run's own model, just trained: the best weights are loaded into it and it
    is returned. The graphs traced for it while validating (greedy decoding above all) then
    serve the final evaluation too, where a fresh copy from the file would trace them again.
    """
    path = check_best_model(run_dir)
    import compgen_tf.models  # noqa: F401  (registers the model classes for deserialization)
    if into is not None:
        into.load_weights(path)
        return into
    return keras.saving.load_model(path)


def check_best_model(run_dir) -> Path:
    """The path of a run directory's best model, checked: a `FileNotFoundError` when it is
    missing, a `CorruptRunFileError` when it is damaged.

    A .keras file is a zip archive, each member with its CRC-32: every member is read and
    checked (`testzip`), since Keras reads the weights without checking them, and a file
    damaged there would load as other weights without a word.
    """
    from compgen_tf.training.callbacks import BEST_MODEL

    path = Path(run_dir) / BEST_MODEL
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: is {run_dir} a finished training run?")
    try:
        with zipfile.ZipFile(path) as archive:
            damaged = archive.testzip()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as error:
        damaged = f"{type(error).__name__}: {error}"
    else:
        damaged = damaged and f"its member {damaged} fails its CRC check"
    if damaged:
        # Keras would call a cut file "File not found"; it is there, and damaged.
        raise CorruptRunFileError(f"{path} is damaged (not a complete .keras file, "
                                  f"{path.stat().st_size} bytes: {damaged}); its checkpoints "
                                  f"hold the last weights, not the selected ones: train the run "
                                  f"again into another --output")
    return path


def load_run_task(run_dir, cls=None):
    """The best model of a run directory as a task model (what `Seq2SeqModel.from_run` and
    `ToyTask.from_run` were: the run directory is understood here, not on the model).

    A toy run saves its functional backbone: it comes back inside a `ToyTask`. `cls`, when
    given, is the class the model must be (a TypeError otherwise).
    """
    from compgen_tf import registry
    from compgen_tf.models.toy_task import ToyTask

    model = load_run_model(run_dir)
    if registry.spec(run_config(run_dir)["model"]).trains_on == "toy":
        model = ToyTask(model, name=model.name)
    if cls is not None and not isinstance(model, cls):
        raise TypeError(f"{run_dir} holds a {type(model).__name__}, not a {cls.__name__}")
    return model


def run_config(run_dir) -> dict:
    """The resolved configuration of a run directory; a clear error if it is not one."""
    config = Path(run_dir) / "config.json"
    if not config.exists():
        raise FileNotFoundError(f"{config} does not exist: is {run_dir} a run directory "
                                "written by `python -m compgen_tf train`?")
    return read_run_file(config)
