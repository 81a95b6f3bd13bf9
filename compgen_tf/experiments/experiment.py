"""`Experiment`: what every kind of task (a SCAN split, meta-learning episodes, a toy task)
provides to the commands, so that `train`, `evaluate`, `reproduce` and `tune` are written once.

Each registered model names its kind of experiment (`compgen_tf.registry.MODELS[name].trains_on`,
its object `compgen_tf.experiments.kinds.experiment_for(name)`):
`compgen_tf.experiments.scan.SCAN`, `compgen_tf.experiments.episodes.EPISODES` or
`compgen_tf.experiments.toy.TOY`. A run directory (`config.json`, `checkpoints/`,
`best_model.keras`, `history.jsonl`, `logs/`, `metrics.json`) has the same layout for all.
"""

from __future__ import annotations

import inspect
import json
import math
import shutil
from pathlib import Path

import keras

from compgen_tf.experiments.config import (CONFIG_DIR, SECTIONS, ConfigError, apply_overrides,
                                           check_learning_rate_schedule, comparable,
                                           config_differences, config_path, load_config,
                                           unrecorded_provenance)

WARM_START = "warm_start.json"


class Experiment:
    """How runs of one kind of task are configured, built, trained, scored and reported.

    Subclasses set `kind` ("scan", "episodes" or "toy"), `task_key` (the configuration key
    that names the task: "split" for SCAN and episodes, "task" for the toy tasks),
    `drops_once` (what the learning-rate decay keys mean, see `training.fit`) and implement
    the methods that raise `NotImplementedError` here.
    """

    kind: str = ""
    task_key: str = "split"
    drops_once: bool = False

    # ------------------------------------------------------------------ configuration

    def resolve_config(self, model: str, task: str, config_file=None, overrides=(),
                       steps: int | None = None, epochs: float | None = None) -> dict:
        """The configuration of `model` on `task` (default file `configs/<model>/<task>.json`)
        with `overrides` ("section.key=value"), `steps` (training.max_steps) or `epochs`
        (passes over the training data) applied; a `ConfigError` names what is wrong,
        including model arguments the model refuses (before any run directory is written).
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
        config = apply_overrides(chosen, overrides)
        check_learning_rate_schedule(config["training"], drops_once=self.drops_once)
        config.pop("split", None)
        config.pop("task", None)
        config.update({"model": model, self.task_key: task})
        if config["training"].get("selection") == "bleu" and not self.scores_bleu(task):
            raise ConfigError(f"training.selection 'bleu' needs a translation split (mt_*); "
                              f"{model} on {task} is scored by exact match")
        self.check_model_args(config)
        self.check_data(config)
        if epochs is not None:
            batch_size = config["training"].get("batch_size", 64)
            config["training"]["max_steps"] = max(
                1, math.ceil(epochs * self.fit_examples(config) / batch_size))
        # How the settings were chosen is the file's to say; what the command line changed
        # was chosen by whoever typed it, which no file records.
        changed = config_differences({s: chosen[s] for s in SECTIONS},
                                     {s: config[s] for s in SECTIONS})
        if changed:
            config["provenance"] = unrecorded_provenance(
                f"{path} changed on the command line ({'; '.join(changed)})")
        config.setdefault("provenance", unrecorded_provenance(
            f"{path} does not say how its settings were chosen"))
        return config

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

    def task(self, config: dict) -> str:
        """The split or task that `config` trains on (its `task_key`)."""
        return config[self.task_key]

    def check_model_args(self, config: dict) -> None:
        """A `ConfigError` unless the model of `config` can be built from its model_args."""
        try:
            self.new_model(config)
        except (ValueError, TypeError) as error:
            raise ConfigError(f"model_args of {config['model']}: {error}") from error

    def check_data(self, config: dict) -> None:
        """A `ConfigError` for a data setting this experiment kind cannot use."""
        if "test_support_sets" in config["data"]:
            raise ConfigError(f"data.test_support_sets applies to meta seq2seq's length tasks, "
                              f"not to {config['model']}")

    def model_arg_names(self, model: str, task: str) -> set[str]:
        """The model_args keys that `model` accepts on `task` (for search-space checks)."""
        raise NotImplementedError

    # ------------------------------------------------------------------------ runs

    def build(self, config: dict, seed: int = 0) -> keras.Model:
        """The task model of `config`, initialised from `seed` exactly as a run builds it."""
        keras.utils.set_random_seed(seed)
        return self.new_model(config)

    def new_model(self, config: dict) -> keras.Model:
        """The task model of `config` (from the current random state)."""
        raise NotImplementedError

    def train(self, config: dict, run_dir, seed: int = 0, verbose: int = 1, command: str = "",
              evaluate_splits=None, warm_start_from=None, model=None, **options) -> dict:
        """Trains `config` into `run_dir` with `fit` (resuming it if interrupted), then scores
        `evaluate_splits` (default: validation and every test split); returns the metrics.

        `model`: the task model to train, built by `build(config, seed)` (a keras-tuner
        trial builds it first); default: built here the same way. `warm_start_from`: a
        finished run of the same configuration with fewer steps (a Hyperband trial's
        parent) whose last checkpoint this run continues.
        """
        raise NotImplementedError

    def evaluate(self, run_dir, splits=None, verbose: int = 1) -> dict:
        """Scores a run's best model on `splits` again; updates and returns its metrics."""
        raise NotImplementedError

    def fit_examples(self, config: dict) -> int:
        """Examples of the training data of `config` less its validation carve."""
        raise NotImplementedError

    def steps_per_epoch(self, config: dict) -> int:
        """Training steps of one pass over the data of `config` (a tuning budget's epoch)."""
        return max(1, math.ceil(self.fit_examples(config)
                                / config["training"].get("batch_size", 64)))

    def test_parts(self, config: dict) -> tuple:
        """The test splits scored at the end of a run."""
        return ("test",)

    def finished(self, metrics: dict, config: dict) -> bool:
        """Whether `metrics` (a run's metrics.json) is the record of a finished, tested run."""
        accuracy = metrics.get("accuracy", {})
        return ("wall_time_s" in metrics and "steps" in metrics
                and all(part in accuracy for part in self.test_parts(config)))

    # ---------------------------------------------------------------------- results

    def results_names(self, config: dict, name: str) -> list[str]:
        """The results files (`results/<model>/<file>.json`) of the seeds run as `name`."""
        return [name]

    def results_records(self, config: dict, name: str, metrics_list, run_dirs) -> dict:
        """{results file name: one record per seed} (see `compgen_tf.experiments.results`)."""
        from compgen_tf.experiments.results import run_record

        return {name: [run_record(m, d) for m, d in zip(metrics_list, run_dirs)]}

    def recorded_config(self, config: dict) -> dict:
        """The part of `config` that a results file records (and refuses to mix)."""
        return config


def class_arguments(cls, skip=()) -> set[str]:
    """Keyword arguments of `cls.__init__` and of its bases that it passes `**kwargs` to,
    up to Keras' own classes."""
    names = set()
    for klass in cls.__mro__:
        if klass is object or klass.__module__.split(".")[0] == "keras":
            break
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        parameters = inspect.signature(init).parameters.values()
        names |= {p.name for p in parameters
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if not any(p.kind is p.VAR_KEYWORD for p in parameters):
            break
    return names - {"self", *skip}


def prepare_run_dir(run_dir, resolved: dict) -> None:
    """Creates `run_dir` with `config.json`; refuses a directory holding another configuration."""
    run_dir = Path(run_dir)
    config_file = run_dir / "config.json"
    if config_file.exists():
        previous = json.loads(config_file.read_text())
        if comparable(previous) != comparable(resolved):
            raise ValueError(f"{run_dir} holds a run with a different configuration; pass "
                             f"another --output or delete it (differences: "
                             f"{config_differences(comparable(previous), comparable(resolved))})")
        return  # the same run: config.json keeps the notes it was started with
    run_dir.mkdir(parents=True, exist_ok=True)
    config_file.write_text(json.dumps(resolved, indent=2) + "\n")


def start_from(warm_start_from, run_dir) -> bool:
    """Copies `warm_start_from`'s checkpoint into `run_dir` when this run has none yet;
    returns whether `fit_run` must extend it (see `copy_checkpoint`)."""
    if warm_start_from is None or (Path(run_dir) / "checkpoints").exists():
        return False
    copy_checkpoint(warm_start_from, run_dir)
    return True


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
    {"from": source_run, "step": the checkpoint's step, "wall_time_s": its training time}."""
    import tensorflow as tf

    from compgen_tf.training.callbacks import BEST_MODEL

    source_run, run_dir = Path(source_run), Path(run_dir)
    shutil.copytree(source_run / "checkpoints", run_dir / "checkpoints")
    for name in (BEST_MODEL, "history.jsonl"):
        if (source_run / name).exists():
            shutil.copy2(source_run / name, run_dir / name)
    latest = tf.train.latest_checkpoint(str(run_dir / "checkpoints"))
    metrics_file = source_run / "metrics.json"
    parent_time = (json.loads(metrics_file.read_text()).get("wall_time_s", 0.0)
                   if metrics_file.exists() else 0.0)
    record = {"from": str(source_run), "step": int(latest.rsplit("-", 1)[1]),
              "wall_time_s": parent_time}
    (run_dir / WARM_START).write_text(json.dumps(record) + "\n")
    return record


def load_run_model(run_dir, into=None):
    """The best model of a run directory.

    `into`: the run's own model, just trained: the best weights are loaded into it and it
    is returned. The graphs traced for it while validating (greedy decoding above all) then
    serve the final evaluation too, where a fresh copy from the file would trace them again.
    """
    from compgen_tf.training.callbacks import BEST_MODEL

    path = Path(run_dir) / BEST_MODEL
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: is {run_dir} a finished training run?")
    import compgen_tf.models  # noqa: F401  (registers the model classes for deserialization)
    if into is not None:
        into.load_weights(path)
        return into
    return keras.saving.load_model(path)


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
    return json.loads(config.read_text())
