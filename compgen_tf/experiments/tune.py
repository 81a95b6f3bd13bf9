"""Hyperparameter search with keras-tuner: `python -m compgen_tf tune`.

    python -m compgen_tf tune --model syntactic_attention --split addprim_jump \\
        --tuner hyperband --max-epochs 27
    python -m compgen_tf tune --model seq2seq --split simple --tuner random --max-trials 20 \\
        --steps 3000

Every registered model can be tuned: a SCAN model on a `--split`, meta seq2seq and the
toy-task models on a `--task`.

    python -m compgen_tf tune --model stack_lstm --task palindromes --tuner random \
        --max-trials 10 --steps 500

The search is keras-tuner's own flow: a `RunHyperModel` (a `keras_tuner.HyperModel`) whose
`build(hp)` makes the task model of the trial's configuration (one set of hyperparameter
values applied to `configs/<model>/<split or task>.json`, or `--config`, after the `--set`
overrides) and whose `fit(hp, model, ...)` trains it as one run of the library (the model's
experiment: `fit` with the library's callbacks) in the trial's run directory,
`OUTPUT/<tuner>/trial_<id>/run`. The objective is the exact-match accuracy on the
VALIDATION data carved from train (`val_exact_match`, maximised; the toy tasks' accuracy);
the test data are never evaluated during a search. `tuner.get_best_models()` loads the
best trials' selected models from their run directories.

Search space: `configs/<model>/search_space.json` (or `--search-space FILE`), a JSON
object mapping `section.key` to a spec:

    {"notes": "where the ranges come from",
     "model_args.hidden_units": {"type": "int", "min": 32, "max": 256, "step": 32},
     "model_args.dropout": {"type": "float", "min": 0.0, "max": 0.5, "step": 0.1},
     "training.learning_rate": {"type": "choice", "values": [0.0003, 0.001, 0.003]},
     "training.jit_compile": {"type": "boolean"}}

`int` and `float` take `min`, `max` and optionally `step` and `sampling` (`linear`,
`log`, `reverse_log`). A key also given with `--set` is fixed at that value and
removed from the search.

Training budget of a trial:
- `--tuner hyperband`: keras-tuner hands each trial an epoch budget (`tuner/epochs`,
  at most `--max-epochs`, default 27, shrinking by `--factor`); it becomes
  `training.max_steps` = epochs x steps per epoch, where an epoch is `--steps N`
  steps if given, else one pass over the fit data (ceil(examples / batch size) of
  that trial; for meta seq2seq, which draws a new episode at every step, `eval_every` steps). A trial promoted from a shorter one (the `from` column) continues
  that trial's run from its last checkpoint (weights, optimizer, data position, best
  score) up to its own budget, as keras-tuner's Hyperband does with `fit`; its
  metrics.json records `warm_start`. The full schedule of `--max-epochs 27 --factor 3` is 70
  trials with 450 epochs of budget in all (`--max-epochs 9`: 23 trials, 87 epochs), of
  which a promoted trial trains only its extra epochs; `--max-trials` caps it.
- `--tuner random` / `bayesian`: `--steps N` fixes `training.max_steps`,
  `--max-epochs N` sets it to N passes over the fit split; with neither, the
  configuration's own `max_steps` applies. Early stopping (patience) still applies.
  `bayesian` needs scipy and scikit-learn (`pip install 'keras-tuner[bayesian]'`).

Resuming: rerunning the same command continues the search. keras-tuner reloads its
state from `OUTPUT/<tuner>/` (finished trials are not run again; an interrupted trial
is retried, and its run directory resumes from its last checkpoint). A larger
`--max-trials` extends a finished search; any other change (model, split, tuner,
seed, search space, base configuration, budget) is refused: pass another `--output`.

Outputs (default `OUTPUT` = `runs/tune/<model>/<split or task>`): `trials.md` and
`trials.json` (the trials ranked by validation exact match, with their
hyperparameters, steps and wall time), `best_config.json` (the best trial's full
configuration, accepted by `python -m compgen_tf train --config`), and
`search.json` (the settings that a rerun must match).

GPU: TensorFlow, and therefore every trial, uses a visible GPU automatically (with
the `gpu` extra installed); `CUDA_VISIBLE_DEVICES=1` picks the second GPU and
`CUDA_VISIBLE_DEVICES=` hides them all. Trials run one after another.

Distributed search (`--distributed`): keras-tuner's own chief/worker mode. Start
the same command once per process, with three environment variables:
`KERASTUNER_ORACLE_IP` / `KERASTUNER_ORACLE_PORT`, the address where the chief
serves the oracle (gRPC), and `KERASTUNER_TUNER_ID`: `chief` for the one process
that runs the oracle (it trains nothing), a distinct name (`tuner0`, `tuner1`, ...)
for each worker, which asks the chief for trials and trains them one after another.

    KERASTUNER_TUNER_ID=chief KERASTUNER_ORACLE_IP=10.0.0.1 KERASTUNER_ORACLE_PORT=8000 \
        python -m compgen_tf tune --model seq2seq --split simple --tuner random --distributed
    KERASTUNER_TUNER_ID=tuner0 KERASTUNER_ORACLE_IP=10.0.0.1 KERASTUNER_ORACLE_PORT=8000 \
        python -m compgen_tf tune --model seq2seq --split simple --tuner random --distributed

Every process must get the same arguments, and `--output` must be one directory
that all of them see (a shared file system across machines): the workers write
the trials' run directories there, and the chief, which ends when the last
trial has, writes the ranked table and `best_config.json` once. The workers
only train; each trial records its worker in `trial_<id>/worker.json` and in
the `worker` column of the table. Restarting a lost worker with the same
`KERASTUNER_TUNER_ID` is safe; restarting the chief continues the search from
its saved state, like an ordinary rerun.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import shlex
import sys
from pathlib import Path

import keras_tuner as kt

from compgen_tf import registry
from compgen_tf.experiments.kinds import experiment_for
from compgen_tf.experiments.config import (CONFIG_DIR, DATA_KEYS, SECTIONS, TRAINING_KEYS,
                                           ConfigError, comparable, config_differences,
                                           validate_config)

OBJECTIVE = "val_exact_match"
TUNERS = ("hyperband", "random", "bayesian")
SEARCH_SPACE_FILE = "search_space.json"
SPEC_FIELDS = {"int": {"type", "min", "max", "step", "sampling"},
               "float": {"type", "min", "max", "step", "sampling"},
               "choice": {"type", "values"},
               "boolean": {"type"}}
SAMPLINGS = ("linear", "log", "reverse_log")
TUNING_SPLITS = ("validation",)
DEFAULT_MAX_TRIALS = 10
DEFAULT_MAX_EPOCHS = 27
FLOAT_DIGITS = 10


class SearchSpaceError(ConfigError):
    """A search space file that cannot be used."""


# --------------------------------------------------------------------------- search spaces

def search_space_path(model: str) -> Path:
    """The committed search space of `model`: `configs/<model>/search_space.json`."""
    return CONFIG_DIR / model / SEARCH_SPACE_FILE


def load_search_space(path, model: str, base_config: dict | None = None) -> dict:
    """Reads and validates a search space file; returns `{section.key: spec}` (no notes).

    `base_config`: a resolved configuration of `model` (with its split or task), whose
    values at both ends of every range are then checked too."""
    path = Path(path)
    if not path.exists():
        raise SearchSpaceError(f"search space file {path} does not exist (expected a JSON "
                               f"object mapping SECTION.KEY to a spec)")
    try:
        space = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise SearchSpaceError(f"{path} is not valid JSON: {error}") from error
    return validate_search_space(space, model, base_config, origin=str(path))


def validate_search_space(space, model: str, base_config: dict | None = None,
                          origin: str = "search space") -> dict:
    """Checks key names, spec types and bounds; with `base_config`, also that the
    configuration (and the model) accept the values at both ends of every range."""
    if not isinstance(space, dict):
        raise SearchSpaceError(f"{origin}: a search space is a JSON object mapping "
                               f"SECTION.KEY to a spec")
    if "notes" in space and not isinstance(space["notes"], str):
        raise SearchSpaceError(f"{origin}: 'notes' must be a string")
    specs = {name: spec for name, spec in space.items() if name != "notes"}
    if not specs:
        raise SearchSpaceError(f"{origin}: no hyperparameters to search")
    spec = registry.spec(model)
    task = (experiment_for(spec).task(base_config) if base_config and "model" in base_config
            else spec.tasks[0])
    valid_keys = {"model_args": experiment_for(spec).model_arg_names(model, task),
                  "training": set(TRAINING_KEYS), "data": set(DATA_KEYS)}
    for name, spec in specs.items():
        section, dot, key = name.partition(".")
        where = f"{origin}: {name}"
        if not dot or section not in SECTIONS or not key:
            raise SearchSpaceError(f"{where}: keys look like SECTION.KEY with SECTION one of "
                                   f"{list(SECTIONS)}")
        if key not in valid_keys[section]:
            raise SearchSpaceError(f"{where}: {key!r} is not a {section} key of model "
                                   f"{model!r}; valid keys: {sorted(valid_keys[section])}")
        _check_spec(spec, where)
    if base_config is not None:
        _check_values_accepted(specs, model, base_config, origin)
    return specs


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_spec(spec, where):
    if not isinstance(spec, dict) or "type" not in spec:
        raise SearchSpaceError(f"{where}: a spec is an object with a 'type' "
                               f"(one of {sorted(SPEC_FIELDS)})")
    kind = spec["type"]
    if kind not in SPEC_FIELDS:
        raise SearchSpaceError(f"{where}: unknown type {kind!r}; expected one of "
                               f"{sorted(SPEC_FIELDS)}")
    unknown = set(spec) - SPEC_FIELDS[kind]
    if unknown:
        raise SearchSpaceError(f"{where}: unknown field(s) {sorted(unknown)} for type "
                               f"{kind!r}; allowed: {sorted(SPEC_FIELDS[kind])}")
    if kind in ("int", "float"):
        for field in ("min", "max"):
            if field not in spec:
                raise SearchSpaceError(f"{where}: type {kind!r} needs '{field}'")
        low, high, step = spec["min"], spec["max"], spec.get("step")
        wanted = (lambda v: isinstance(v, int) and not isinstance(v, bool)) if kind == "int" \
            else _is_number
        for field, value in (("min", low), ("max", high), ("step", step)):
            if value is not None and not wanted(value):
                raise SearchSpaceError(f"{where}: '{field}' must be "
                                       f"{'an integer' if kind == 'int' else 'a number'}, "
                                       f"got {value!r}")
        if not low < high:
            raise SearchSpaceError(f"{where}: bad bounds: min ({low}) must be below max "
                                   f"({high})")
        sampling = spec.get("sampling", "linear")
        if sampling not in SAMPLINGS:
            raise SearchSpaceError(f"{where}: unknown sampling {sampling!r}; expected one of "
                                   f"{list(SAMPLINGS)}")
        if sampling != "linear" and low <= 0:
            raise SearchSpaceError(f"{where}: bad bounds: {sampling} sampling needs min > 0, "
                                   f"got {low}")
        if step is not None:
            if step <= 0:
                raise SearchSpaceError(f"{where}: bad step {step}: must be positive")
            if sampling == "linear" and step > high - low:
                raise SearchSpaceError(f"{where}: bad step {step}: larger than max - min "
                                       f"({high - low}), so only min could be drawn")
            if sampling != "linear" and step <= 1:
                raise SearchSpaceError(f"{where}: bad step {step}: with {sampling} sampling "
                                       f"the step is a factor and must be > 1")
    elif kind == "choice":
        values = spec.get("values")
        if not isinstance(values, list) or len(values) < 2:
            raise SearchSpaceError(f"{where}: 'values' must be a list of at least 2 values")
        if len({json.dumps(v) for v in values}) != len(values):
            raise SearchSpaceError(f"{where}: 'values' has duplicates: {values}")
        kinds = {_value_kind(v) for v in values}
        if None in kinds or len(kinds) != 1:
            raise SearchSpaceError(f"{where}: 'values' must all be integers, all numbers, all "
                                   f"strings or all booleans, got {values}")


def _value_kind(value):
    if isinstance(value, bool):
        return "bool"
    if _is_number(value):
        return "number"
    if isinstance(value, str):
        return "str"
    return None


def _candidate_values(spec) -> list:
    kind = spec["type"]
    if kind in ("int", "float"):
        return [spec["min"], spec["max"]]
    if kind == "choice":
        return list(spec["values"])
    return [False, True]


def _check_values_accepted(specs, model, base_config, origin):
    """Every value at the ends of each range must pass the config schema and the model."""
    model_spec = registry.spec(model)
    experiment = experiment_for(model_spec)
    for name, spec in specs.items():
        section, _, key = name.partition(".")
        for value in _candidate_values(spec):
            config = copy.deepcopy(base_config)
            config[section][key] = value
            config.setdefault("model", model)
            config.setdefault(experiment.task_key, model_spec.tasks[0])
            try:
                config = validate_config(config, origin="configuration")
                if section == "model_args":
                    experiment.check_model_args(config)
            except (ConfigError, ValueError, TypeError) as error:
                raise SearchSpaceError(f"{origin}: {name}: the value {value!r} in its range is "
                                       f"rejected: {error}") from error


def hyperparameters(specs: dict):
    """A `keras_tuner.HyperParameters` holding the search space."""
    hp = kt.HyperParameters()
    for name, spec in specs.items():
        kind, sampling = spec["type"], spec.get("sampling", "linear")
        if kind == "int":
            hp.Int(name, spec["min"], spec["max"], step=spec.get("step"), sampling=sampling)
        elif kind == "float":
            hp.Float(name, float(spec["min"]), float(spec["max"]), step=spec.get("step"),
                     sampling=sampling)
        elif kind == "choice":
            hp.Choice(name, spec["values"])
        else:
            hp.Boolean(name)
    return hp


def searched_values(values: dict) -> dict:
    """The hyperparameter values of a trial, without keras-tuner's own `tuner/...` entries."""
    return {name: (round(value, FLOAT_DIGITS) if isinstance(value, float) else value)
            for name, value in values.items() if not name.startswith("tuner/")}


def apply_hyperparameters(config: dict, values: dict) -> dict:
    """`config` with each `section.key` value of a trial set; validated."""
    config = copy.deepcopy(config)
    for name, value in searched_values(values).items():
        section, _, key = name.partition(".")
        config[section][key] = value
    return validate_config(config, origin="trial configuration")


# --------------------------------------------------------------------------- budgets

def trial_max_steps(experiment, config: dict, values: dict, tuner: str, steps: int | None,
                    max_epochs: int | None) -> int:
    """`training.max_steps` of a trial (see the module docstring)."""
    if tuner == "hyperband":
        epochs = int(values["tuner/epochs"])
        return epochs * (steps if steps else experiment.steps_per_epoch(config))
    if steps:
        return steps
    if max_epochs:
        return max_epochs * experiment.steps_per_epoch(config)
    return config["training"].get("max_steps", 10000)


# --------------------------------------------------------------------------- the tuner

class RunHyperModel(kt.HyperModel):
    """A keras-tuner `HyperModel` whose trial is one run of the library.

    `build(hp)` returns the task model of the trial's configuration (the base configuration
    with the values of `hp` and the trial's step budget), initialised from `seed` as a
    run is; `fit(hp, model, run_dir, warm_start_from)` trains it with the model's experiment
    (`Experiment.train`: `fit`, model selection on validation exact match, early stopping,
    resumable checkpoints) and returns `{"val_exact_match": the selected model's score}`.
    Only the validation data are scored: a search never reads the test data.

    Args:
        experiment: the model's `Experiment` (`compgen_tf.experiments.kinds.experiment_for(model)`).
        base_config: the resolved base configuration (with its model and split or task).
        seed: the seed of every trial's initialisation and data order.
        tuner: "hyperband", "random" or "bayesian" (what a trial's budget means).
        steps, max_epochs: the budget options (see the module docstring).
        command: recorded in every trial's metrics.
    """

    def __init__(self, experiment, base_config: dict, seed: int = 0, tuner: str = "random",
                 steps: int | None = None, max_epochs: int | None = None, command: str = "",
                 **kwargs):
        super().__init__(**kwargs)
        self.experiment, self.base_config, self.seed = experiment, base_config, seed
        self.tuner, self.steps, self.max_epochs, self.command = tuner, steps, max_epochs, command

    def trial_config(self, hp) -> dict:
        """The base configuration with the trial's values and step budget."""
        config = apply_hyperparameters(self.base_config, hp.values)
        config["training"]["max_steps"] = trial_max_steps(
            self.experiment, config, hp.values, self.tuner, self.steps, self.max_epochs)
        return config

    def build(self, hp):
        return self.experiment.build(self.trial_config(hp), self.seed)

    def fit(self, hp, model, run_dir=None, warm_start_from=None, callbacks=None, **kwargs):
        # keras-tuner's own callbacks (its per-epoch report and best-epoch weights) are not
        # used: the run selects and saves its best model itself (`best_model.keras`, read
        # back by `RunTuner.load_model`), with an objective computed by decoding, not a
        # Keras metric.
        metrics = self.experiment.train(self.trial_config(hp), run_dir, seed=self.seed,
                                        verbose=0, command=self.command,
                                        evaluate_splits=TUNING_SPLITS,
                                        warm_start_from=warm_start_from, model=model)
        return {OBJECTIVE: float(metrics["accuracy"]["validation"])}


class RunTuner(kt.Tuner):
    """keras-tuner's `Tuner` with one run directory per trial (`trial_<id>/run`); a Hyperband
    trial promoted from a shorter one continues its parent's run (`warm_start_from`)."""

    def run_trial(self, trial, *args, **kwargs):
        run_dir = trial_run_dir(self, trial.trial_id)
        if worker_id() is not None:
            run_dir.parent.mkdir(parents=True, exist_ok=True)
            (run_dir.parent / WORKER_FILE).write_text(json.dumps({"tuner_id": worker_id()})
                                                      + "\n")
        parent = trial.hyperparameters.values.get("tuner/trial_id")
        parent_run = trial_run_dir(self, parent) if parent else None
        if parent_run is not None and not (parent_run / "checkpoints").exists():
            parent_run = None
        return super().run_trial(trial, *args, run_dir=run_dir, warm_start_from=parent_run,
                                 **kwargs)

    def _populate_initial_space(self):
        # keras-tuner builds the hypermodel here to discover the search space. Ours is
        # declared in full up front (`hyperparameters(specs)`, without conditional scopes),
        # so no model is built before the first trial.
        pass

    def load_model(self, trial):
        from compgen_tf.experiments.experiment import load_run_model

        return load_run_model(trial_run_dir(self, trial.trial_id))

    def on_trial_begin(self, trial):
        super().on_trial_begin(trial)
        # keras-tuner saves its tuner file only when a trial ends; without it, a search
        # interrupted during its first trial would restart from scratch and draw new
        # values for trial 0. Saved now, a rerun reloads the oracle, which sends the
        # interrupted trial back for a retry in the same run directory.
        self.save()

    def on_trial_end(self, trial):
        if trial.status != "COMPLETED" and trial.message:
            print(f"trial {trial.trial_id} failed:\n{trial.message}", file=sys.stderr,
                  flush=True)
        super().on_trial_end(trial)


def make_tuner(kind: str, base_config: dict, specs: dict, output, seed: int = 0,
               max_trials: int | None = None, steps: int | None = None,
               max_epochs: int | None = None, factor: int = 3, command: str = "",
               verbose: int = 1):
    """A `RunTuner` over a `RunHyperModel` of `base_config` (a resolved configuration)."""
    objective = kt.Objective(OBJECTIVE, direction="max")
    common = dict(objective=objective, hyperparameters=hyperparameters(specs), seed=seed,
                  allow_new_entries=False, tune_new_entries=False)
    if kind == "hyperband":
        oracle = kt.oracles.HyperbandOracle(max_epochs=max_epochs or DEFAULT_MAX_EPOCHS,
                                            factor=factor, hyperband_iterations=1, **common)
        oracle.max_trials = max_trials  # optional cap on top of the hyperband schedule
    elif kind == "random":
        oracle = kt.oracles.RandomSearchOracle(max_trials=max_trials or DEFAULT_MAX_TRIALS,
                                               **common)
    elif kind == "bayesian":
        oracle = kt.oracles.BayesianOptimizationOracle(
            max_trials=max_trials or DEFAULT_MAX_TRIALS, **common)
    else:
        raise ValueError(f"unknown tuner {kind!r}; expected one of {list(TUNERS)}")
    experiment = experiment_for(base_config["model"])
    hypermodel = RunHyperModel(experiment, base_config, seed=seed, tuner=kind, steps=steps,
                               max_epochs=max_epochs, command=command)
    tuner = RunTuner(oracle, hypermodel, directory=str(output), project_name=kind,
                     overwrite=False)
    tuner.oracle.verbose = verbose
    return tuner


WORKER_FILE = "worker.json"
DISTRIBUTED_VARIABLES = ("KERASTUNER_TUNER_ID", "KERASTUNER_ORACLE_IP", "KERASTUNER_ORACLE_PORT")


def distributed_role() -> str:
    """"chief" or "worker", from keras-tuner's environment variables; a clear error if unset."""
    missing = [name for name in DISTRIBUTED_VARIABLES if not os.environ.get(name)]
    if missing:
        raise ConfigError(f"--distributed needs the environment variables "
                          f"{', '.join(DISTRIBUTED_VARIABLES)} (missing: {', '.join(missing)}); "
                          f"see `python -m compgen_tf tune --help`")
    return "chief" if "chief" in os.environ["KERASTUNER_TUNER_ID"] else "worker"


def worker_id() -> str | None:
    """This process's keras-tuner worker name in a distributed search, else None."""
    if os.environ.get("KERASTUNER_ORACLE_IP") and "chief" not in os.environ.get(
            "KERASTUNER_TUNER_ID", "chief"):
        return os.environ["KERASTUNER_TUNER_ID"]
    return None


def trial_run_dir(tuner, trial_id) -> Path:
    return Path(tuner.project_dir) / f"trial_{trial_id}" / "run"


def trial_rows(tuner) -> list[dict]:
    """Every trial of a tuner, ranked: completed ones by objective (best first)."""
    rows = []
    for trial in tuner.oracle.trials.values():
        values = trial.hyperparameters.values
        run_dir = trial_run_dir(tuner, trial.trial_id)
        metrics_file = run_dir / "metrics.json"
        metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
        completed = trial.status == "COMPLETED" and trial.score is not None
        worker_file = run_dir.parent / WORKER_FILE
        row = {"rank": None, "trial_id": trial.trial_id, "status": trial.status,
               OBJECTIVE: float(trial.score) if completed else None,
               "hyperparameters": searched_values(values),
               "steps": metrics.get("steps"), "best_step": metrics.get("best_step"),
               "wall_time_s": metrics.get("wall_time_s"), "run_dir": str(run_dir)}
        if worker_file.exists():
            row["worker"] = json.loads(worker_file.read_text())["tuner_id"]
        if "tuner/epochs" in values:
            row["epochs"] = values["tuner/epochs"]
            row["from_trial"] = values.get("tuner/trial_id")
        rows.append(row)
    order = lambda r: int(r["trial_id"])  # noqa: E731  (ties: the earlier trial first)
    done = sorted((r for r in rows if r[OBJECTIVE] is not None),
                  key=lambda r: (-r[OBJECTIVE], order(r)))
    for rank, row in enumerate(done, start=1):
        row["rank"] = rank
    return done + sorted((r for r in rows if r[OBJECTIVE] is None), key=order)


def markdown_table(rows: list[dict]) -> str:
    """The ranked trials as a Markdown table."""
    names = sorted({name for row in rows for name in row["hyperparameters"]})
    hyperband = any("epochs" in row for row in rows)
    distributed = any("worker" in row for row in rows)
    header = ["rank", "trial", OBJECTIVE] + names + (["epochs", "from"] if hyperband else []) \
        + ["steps", "wall time (s)", "status"] + (["worker"] if distributed else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        cells = [str(row["rank"] or "—"), row["trial_id"],
                 "—" if row[OBJECTIVE] is None else f"{row[OBJECTIVE]:.4f}"]
        cells += [_cell(row["hyperparameters"].get(name)) for name in names]
        if hyperband:
            cells += [_cell(row.get("epochs")), _cell(row.get("from_trial"))]
        cells += [_cell(row["steps"]), _cell(row["wall_time_s"]), row["status"]]
        if distributed:
            cells.append(_cell(row.get("worker")))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _cell(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def best_config(rows: list[dict], base_config: dict, model: str, split: str,
                command: str) -> dict | None:
    """The full configuration of the best trial (as its run directory resolved it)."""
    if not rows or rows[0][OBJECTIVE] is None:
        return None
    best = rows[0]
    resolved = json.loads((Path(best["run_dir"]) / "config.json").read_text())
    values = ", ".join(f"{k}={_cell(v)}" for k, v in best["hyperparameters"].items())
    config = {"notes": (
        f"Best trial ({best['trial_id']}) of a keras-tuner search for model {model!r} on split "
        f"{split!r} ({command}): validation exact match {best[OBJECTIVE]:.4f} after "
        f"{best['steps']} steps (seed {resolved.get('seed')}, training.max_steps "
        f"{resolved['training'].get('max_steps')}, the search's budget: raise it for a full "
        f"run). Searched values: {values}. Everything else as in the base configuration, "
        f"whose notes were: {base_config.get('notes', '')}")}
    config["provenance"] = {"kind": "validation", "reason": (
        f"best trial of `{command}`, ranked on validation exact match (validation carved "
        f"from train); searched: {', '.join(best['hyperparameters'])}")}
    config.update((section, resolved[section]) for section in SECTIONS)
    return validate_config(config, origin="best configuration")


# --------------------------------------------------------------------------- command line

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m compgen_tf tune", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, choices=sorted(registry.MODELS))
    task = parser.add_mutually_exclusive_group(required=True)
    task.add_argument("--split", dest="task", metavar="SPLIT", help="SCAN split of a SCAN model")
    task.add_argument("--task", dest="task", metavar="TASK",
                      help="task of meta_seq2seq (episodes) or of a toy-task model")
    parser.add_argument("--tuner", default="hyperband", choices=TUNERS,
                        help="search algorithm (default: hyperband)")
    parser.add_argument("--max-trials", type=int,
                        help=f"number of trials (random/bayesian, default {DEFAULT_MAX_TRIALS}); "
                             "an optional cap for hyperband")
    parser.add_argument("--max-epochs", type=int,
                        help=f"hyperband: largest budget in epochs (default {DEFAULT_MAX_EPOCHS}); "
                             "random/bayesian: training length in passes over the fit split")
    parser.add_argument("--factor", type=int, default=3,
                        help="hyperband reduction factor (default: 3)")
    parser.add_argument("--steps", type=int,
                        help="random/bayesian: training.max_steps of every trial; hyperband: "
                             "steps per budget epoch (default: one pass over the fit split)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the search and of every trial's training (default: 0)")
    parser.add_argument("--config",
                        help="base configuration (default: configs/MODEL/SPLIT_OR_TASK.json)")
    parser.add_argument("--search-space", metavar="FILE",
                        help="search space (default: configs/MODEL/search_space.json)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one base configuration value; a searched key set here "
                             "is fixed and leaves the search (repeatable)")
    parser.add_argument("--output",
                        help="output directory (default: runs/tune/MODEL/SPLIT_OR_TASK)")
    parser.add_argument("--distributed", action="store_true",
                        help="keras-tuner chief/worker mode: this process is the chief or a "
                             "worker, as KERASTUNER_TUNER_ID says (see above)")
    parser.add_argument("--quiet", action="store_true", help="no per-trial keras-tuner report")
    return parser


def _check_numbers(args):
    for name in ("max_trials", "max_epochs", "steps"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if args.factor < 2:
        raise ConfigError(f"--factor must be >= 2, got {args.factor}")
    if args.tuner != "hyperband" and args.steps and args.max_epochs:
        raise ConfigError(f"--tuner {args.tuner}: give --steps or --max-epochs, not both")
    if args.tuner == "bayesian":
        try:
            import scipy  # noqa: F401
            import sklearn  # noqa: F401
        except ImportError as error:
            raise ConfigError("--tuner bayesian needs scipy and scikit-learn "
                              f"(pip install 'keras-tuner[bayesian]'): {error}") from None


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    command = "python -m compgen_tf tune " + shlex.join(argv)
    output = Path(args.output or Path("runs") / "tune" / args.model / args.task)
    spec = registry.spec(args.model)
    flag = "--split" if spec.trains_on == "scan" else "--task"
    if ("--task" if flag == "--split" else "--split") in argv:
        print(f"error: {args.model} trains on a {flag}, one of: {', '.join(spec.tasks)}",
              file=sys.stderr)
        return 2
    try:
        _check_numbers(args)
        role = distributed_role() if args.distributed else None
        if role is None and os.environ.get("KERASTUNER_ORACLE_IP"):
            raise ConfigError("KERASTUNER_ORACLE_IP is set: keras-tuner would run a distributed "
                              "search; pass --distributed, or unset it")
        base = experiment_for(spec).resolve_config(args.model, args.task, args.config, args.set)
        if base["training"].get("selection", "exact_match") != "exact_match":
            # Trials are ranked on validation exact match, which is about 0 for every
            # translation trial: a search there would rank noise.
            raise ConfigError("tune ranks trials on validation exact match; a configuration "
                              f"with training.selection {base['training']['selection']!r} "
                              "cannot be searched")
        space_file = Path(args.search_space or search_space_path(args.model))
        specs = load_search_space(space_file, args.model, base)
        fixed = sorted(name.partition("=")[0] for name in args.set
                       if name.partition("=")[0] in specs)
        for name in fixed:
            del specs[name]
            print(f"{name} is fixed by --set: not searched", flush=True)
        if not specs:
            raise SearchSpaceError(f"{space_file}: every searched key is fixed by --set; "
                                   f"nothing left to search")
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    settings = {"model": args.model, "split": args.task, "tuner": args.tuner,
                "seed": args.seed, "steps": args.steps, "max_epochs": args.max_epochs,
                "factor": args.factor if args.tuner == "hyperband" else None,
                "base_config": base, "search_space": specs}
    settings_file = output / "search.json"
    if settings_file.exists():
        previous = json.loads(settings_file.read_text())
        previous.pop("command", None)
        changes = config_differences(comparable(previous), comparable(settings))
        if changes:
            print(f"error: {output} holds another search ({'; '.join(changes)}); pass another "
                  f"--output or delete it", file=sys.stderr)
            return 2
    output.mkdir(parents=True, exist_ok=True)
    # Aside and renamed: in a distributed search every process writes this file.
    partial = settings_file.with_name(f".search.json.{os.getpid()}")
    partial.write_text(json.dumps(dict(settings, command=command), indent=2) + "\n")
    os.replace(partial, settings_file)

    tuner = make_tuner(args.tuner, base, specs, output, seed=args.seed,
                       max_trials=args.max_trials, steps=args.steps,
                       max_epochs=args.max_epochs, factor=args.factor, command=command,
                       verbose=0 if args.quiet else 1)
    failure = None
    try:
        tuner.search()
    except RuntimeError as error:  # keras-tuner: too many consecutive failed trials
        failure = error
    if role == "worker":
        # The chief owns the trials' results and writes the report, once.
        if failure is not None:
            print(f"error: worker {worker_id()} stopped: {failure}", file=sys.stderr)
            return 1
        print(f"worker {worker_id()}: no trial left; the chief writes the report")
        return 0
    rows = trial_rows(tuner)
    table = markdown_table(rows)
    completed = sum(r[OBJECTIVE] is not None for r in rows)
    title = (f"# keras-tuner {args.tuner} search: {args.model} on {args.task}\n\n"
             f"Objective: `{OBJECTIVE}`, exact match on the validation split (maximised; the "
             f"test split is not evaluated). {completed} of {len(rows)} trials completed. "
             f"Trial run directories: `{tuner.project_dir}/trial_<id>/run`.\n\n"
             f"Command: `{command}`\n\n")
    (output / "trials.md").write_text(title + table)
    (output / "trials.json").write_text(json.dumps(
        {"model": args.model, "split": args.task, "tuner": args.tuner,
         "objective": {"name": OBJECTIVE, "direction": "max", "split": "validation"},
         "command": command, "trials": rows}, indent=2) + "\n")
    print(table, end="")
    best = best_config(rows, base, args.model, args.task, command)
    if best is not None:
        path = output / "best_config.json"
        path.write_text(json.dumps(best, indent=2) + "\n")
        print(f"best: trial {rows[0]['trial_id']}, {OBJECTIVE} {rows[0][OBJECTIVE]:.4f}; "
              f"{output / 'trials.md'}; train it with:\n  python -m compgen_tf train --model "
              f"{args.model} {flag} {args.task} --config {path} --seed {args.seed}")
    if failure is not None:
        print(f"error: the search stopped: {failure}", file=sys.stderr)
        return 1
    if best is None:
        print("error: no trial completed", file=sys.stderr)
        return 1
    return 0
