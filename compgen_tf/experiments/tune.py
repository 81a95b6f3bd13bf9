"""keras-tuner's side of `python -m compgen_tf tune` (the manual: `compgen_tf.cli.tune`).

A `RunTuner` (a `keras_tuner.Tuner`, one run directory per trial) over a `RunHyperModel`
(a `keras_tuner.HyperModel` whose trial is one run of the library), made by `make_tuner`
with one of keras-tuner's oracles; the trials' budgets (`trial_max_steps`); the process's
role in a distributed search (`distributed_role`, `worker_id`); and what a search reports
(`trial_rows`, `markdown_table`, `best_config`, written by `write_report`; the settings a
rerun must match, `record_search`). The search space file and its checks are
`compgen_tf.experiments.search_space`.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import keras_tuner as kt

from compgen_tf import registry
from compgen_tf.names import DEFAULT_MAX_EPOCHS, DEFAULT_MAX_TRIALS, TUNERS  # noqa: F401
from compgen_tf.experiments.config import (SECTIONS, ConfigError, comparable, config_differences,
                                           validate_config)
from compgen_tf.experiments.kinds import experiment_for
from compgen_tf.experiments.search_space import apply_hyperparameters, searched_values

OBJECTIVE = "val_exact_match"
TUNING_SPLITS = ("validation",)


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


# --------------------------------------------------------------------------- budgets

def trial_max_steps(experiment, config, values: dict, tuner: str, steps: int | None,
                    max_epochs: int | None) -> int:
    """`training.max_steps` of a trial (the budgets of `compgen_tf.cli.tune`'s manual), whose
    configuration before its budget is the `RunConfig` `config`."""
    if tuner == "hyperband":
        epochs = int(values["tuner/epochs"])
        return epochs * (steps if steps else experiment.steps_per_epoch(config))
    if steps:
        return steps
    if max_epochs:
        return max_epochs * experiment.steps_per_epoch(config)
    return config.training.max_steps


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
        base_config: the base configuration in its JSON form (`RunConfig.to_json()`: with its
            model and split or task).
        seed: the seed of every trial's initialisation and data order.
        tuner: "hyperband", "random" or "bayesian" (what a trial's budget means).
        steps, max_epochs: the budget options (see `trial_max_steps`).
        command: recorded in every trial's metrics.
    """

    def __init__(self, experiment, base_config: dict, seed: int = 0, tuner: str = "random",
                 steps: int | None = None, max_epochs: int | None = None, command: str = "",
                 **kwargs):
        super().__init__(**kwargs)
        self.experiment, self.base_config, self.seed = experiment, base_config, seed
        self.tuner, self.steps, self.max_epochs, self.command = tuner, steps, max_epochs, command

    def trial_config(self, hp):
        """The `RunConfig` of the base configuration with the trial's values and step budget."""
        config = self.experiment.run_config(apply_hyperparameters(self.base_config, hp.values),
                                            origin="trial configuration")
        return config.with_training(max_steps=trial_max_steps(
            self.experiment, config, hp.values, self.tuner, self.steps, self.max_epochs))

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
    """A `RunTuner` over a `RunHyperModel` of `base_config` (a resolved configuration in its
    JSON form, `RunConfig.to_json()`)."""
    objective = kt.Objective(OBJECTIVE, direction="max")
    # keras-tuner's Oracle keeps `seed or random.randint(1, 10000)`: seed 0 would draw a
    # random one, and two `--seed 0` searches would try different values. Its seed is
    # this search's seed + 1, never 0 (each search seed still its own oracle seed).
    common = dict(objective=objective, hyperparameters=hyperparameters(specs), seed=seed + 1,
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
    """The run directory where trial `trial_id` of `tuner` trains:
    `<project dir>/trial_<id>/run`."""
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


# --------------------------------------------------------------------------- a search's files

SEARCH_FILE = "search.json"


def check_search_files(output) -> None:
    """A `ConfigError` naming the first JSON file under a search directory that is cut short
    or damaged: this file, keras-tuner's (`oracle.json`, `tuner0.json`, each trial's
    `trial.json`) and the trials' run directories. keras-tuner reads its own with a bare
    `json.loads`, whose error would say neither which file nor what to do."""
    for path in sorted(Path(output).rglob("*.json")):
        if path.name.startswith("."):  # a file being written aside, not yet renamed
            continue
        try:
            json.loads(path.read_text())
        except ValueError as error:  # JSONDecodeError, UnicodeDecodeError (damaged bytes)
            raise ConfigError(f"{path} is damaged (not complete JSON: {error}); delete it (a "
                              f"trial's file: its trial_<id> folder, which then runs again) "
                              f"or pass another --output") from None


def record_search(output, settings: dict, command: str) -> None:
    """Writes `OUTPUT/search.json` (`settings` and `command`), the settings a rerun must match.

    Raises:
        ConfigError: `output` holds a search with other settings (the command may differ),
            or one of its files is damaged (`check_search_files`).
    """
    output = Path(output)
    check_search_files(output)
    settings_file = output / SEARCH_FILE
    if settings_file.exists():
        previous = json.loads(settings_file.read_text())
        previous.pop("command", None)
        changes = config_differences(comparable(previous), comparable(settings))
        if changes:
            raise ConfigError(f"{output} holds another search ({'; '.join(changes)}); pass "
                              f"another --output or delete it")
    output.mkdir(parents=True, exist_ok=True)
    # Aside and renamed: in a distributed search every process writes this file.
    partial = settings_file.with_name(f".{SEARCH_FILE}.{os.getpid()}")
    partial.write_text(json.dumps(dict(settings, command=command), indent=2) + "\n")
    os.replace(partial, settings_file)


def write_report(tuner, output, settings: dict, command: str):
    """Writes `trials.md`, `trials.json` and (when a trial completed) `best_config.json`.

    Args:
        tuner: the searched `RunTuner`.
        output: the search's directory.
        settings: as `record_search` got them (`model`, `split`, `tuner`, `base_config`).
        command: the search's command line.

    Returns:
        (the ranked trial rows, their Markdown table, the best configuration or None).
    """
    output = Path(output)
    model, task, kind = settings["model"], settings["split"], settings["tuner"]
    rows = trial_rows(tuner)
    table = markdown_table(rows)
    completed = sum(r[OBJECTIVE] is not None for r in rows)
    title = (f"# keras-tuner {kind} search: {model} on {task}\n\n"
             f"Objective: `{OBJECTIVE}`, exact match on the validation split (maximised; the "
             f"test split is not evaluated). {completed} of {len(rows)} trials completed. "
             f"Trial run directories: `{tuner.project_dir}/trial_<id>/run`.\n\n"
             f"Command: `{command}`\n\n")
    (output / "trials.md").write_text(title + table)
    (output / "trials.json").write_text(json.dumps(
        {"model": model, "split": task, "tuner": kind,
         "objective": {"name": OBJECTIVE, "direction": "max", "split": "validation"},
         "command": command, "trials": rows}, indent=2) + "\n")
    best = best_config(rows, settings["base_config"], model, task, command)
    if best is not None:
        (output / "best_config.json").write_text(json.dumps(best, indent=2) + "\n")
    return rows, table, best
