"""Several seeds of any registered model, trained and summarised in its results file.

The command is `python -m compgen_tf reproduce` (`compgen_tf.cli.reproduce`); this module is
what it runs: `reproduce(Reproduction(...))`. Each seed is an ordinary run directory
(`runs/<model>/<name>/seed<N>`); seeds that already finished are not trained again,
interrupted ones resume, and a finished seed of another configuration is refused. The
results go to `results/<model>/<name>.json` (`compgen_tf.experiments.results`).

A process claims a seed by holding an exclusive lock on `seed<N>.lock` beside its run
directory while it trains, so any number of processes sharing a runs directory (on one
machine or on a shared file system with working `flock`) split the seeds between them: none
is trained twice, and each waits for the seeds the others are training before it writes the
summary. `Reproduction.helper_command` starts such processes (`--jobs N`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import subprocess
from pathlib import Path

from compgen_tf.errors import RunDirectoryError
from compgen_tf.experiments.config import comparable, config_differences
from compgen_tf.experiments.experiment import prepare_run_dir, read_metrics, read_run_file
from compgen_tf.experiments.kinds import experiment_for
from compgen_tf.experiments.results import RESULTS_DIR, earlier_results, write_results
from compgen_tf.versions import package_versions


class ReproduceFailed(RuntimeError):
    """Seeds that did not train: a helper process failed or a seed did not finish (the
    command's exit code 1; a configuration or run directory that cannot be used is a
    `ValueError`, exit code 2)."""


@dataclasses.dataclass(frozen=True)
class Reproduction:
    """What to reproduce: seeds `first_seed`..`first_seed + seeds - 1` of `model` on `task`.

    Attributes:
        model: a registered model name.
        task: its SCAN split or task.
        seeds: how many seeds.
        first_seed: the first seed.
        config_file: the configuration file (default: the committed one of model and task).
        name: the run and results name (default: `task`).
        overrides: "section.key=value" overrides, applied in order.
        steps: training.max_steps, when given.
        runs_dir: the parent of the run directories.
        results_dir: where the results files go.
        write_results: False to train the seeds only (a helper process, a check).
        quiet: no progress bars.
        command: the command recorded in the run directories and results files.
        helper_command: the command line of a process that trains the same seeds without
            writing results; `jobs - 1` of them run beside this one.
        jobs: seeds trained at a time.
        continue_from: the name of finished runs of the same model (`runs_dir/<model>/
            <continue_from>/seed<N>`) of this configuration but for a smaller
            `training.max_steps`: each seed continues its own from its last checkpoint
            (`check_continuation`), as a longer run of the same seed would have gone on
            (the weights, data order and draws; the patience count starts afresh).
    """

    model: str
    task: str
    seeds: int = 3
    first_seed: int = 0
    config_file: str | None = None
    name: str | None = None
    overrides: tuple = ()
    steps: int | None = None
    runs_dir: str = "runs"
    results_dir: str = str(RESULTS_DIR)
    write_results: bool = True
    quiet: bool = False
    command: str = ""
    helper_command: tuple = ()
    jobs: int = 1
    continue_from: str | None = None

    @property
    def run_name(self) -> str:
        """The name of the run directories and results files: `name`, else the task's
        (`Experiment.run_name`: a data folder's own name)."""
        return self.name or experiment_for(self.model).run_name(self.task)

    def run_dir(self, seed: int) -> Path:
        """The run directory of `seed`."""
        return Path(self.runs_dir) / self.model / self.run_name / f"seed{seed}"

    def parent_dir(self, seed: int) -> Path | None:
        """The run that `seed` continues (`continue_from`), or None."""
        if self.continue_from is None:
            return None
        return Path(self.runs_dir) / self.model / self.continue_from / f"seed{seed}"

    @property
    def seed_range(self) -> range:
        """The seeds to train: `first_seed` to `first_seed + seeds - 1`."""
        return range(self.first_seed, self.first_seed + self.seeds)


@dataclasses.dataclass(frozen=True)
class Reproduced:
    """What `reproduce` did: the finished seeds' metrics (none when it wrote no results) and
    the results files written, each with its summary."""

    metrics: dict
    results: dict


def _print(line: str) -> None:
    print(line, flush=True)


def reproduce(request: Reproduction, echo=_print) -> Reproduced:
    """Trains the unfinished seeds of `request` and (unless `request.write_results` is
    False) writes the results files; `echo` prints each progress line.

    Raises a `ValueError` (a `ConfigError` among them) for a configuration, results file or
    run directory that cannot be used, `ReproduceFailed` when a seed did not train.
    """
    experiment = experiment_for(request.model)
    config = experiment.resolve_config(request.model, request.task, request.config_file,
                                       list(request.overrides), request.steps)
    # Before any seed is claimed (a lock file, helper processes): a bad model argument is
    # one error here, not one per seed after the run directories exist.
    experiment.check_model_values(config)
    # The provenance goes to the results file's top level, not into its configuration.
    recorded = {key: value for key, value in experiment.recorded_config(config.to_json()).items()
                if key != "provenance"}
    results_files = [Path(request.results_dir) / request.model / f"{file}.json"
                     for file in experiment.results_names(config, request.run_name)]
    if request.write_results:
        # A results file of another configuration is refused now, not after training.
        for path in results_files:
            earlier_results(path, request.task, recorded)

    seeds = request.seed_range
    run_dirs = {seed: request.run_dir(seed) for seed in seeds}
    parent_dirs = {seed: request.parent_dir(seed) for seed in seeds}
    for seed, parent in parent_dirs.items():
        if parent is not None and not (run_dirs[seed] / "checkpoints").exists():
            check_continuation(experiment, config, parent, seed)
    helpers = [subprocess.Popen(list(request.helper_command))
               for _ in range(min(request.jobs, request.seeds) - 1)]
    try:
        for seed in seeds:
            _train_unclaimed_seed(experiment, config, run_dirs[seed], seed, request.command,
                                  request.quiet, echo, parent_dirs[seed])
    except ValueError:  # a finished run directory of another configuration
        for helper in helpers:
            helper.wait()
        raise
    failed = [helper.args for helper in helpers if helper.wait() != 0]
    if failed:
        raise ReproduceFailed(f"{len(failed)} helper process(es) failed")
    if not request.write_results:
        return Reproduced({}, {})
    metrics_list = []
    for seed in seeds:
        metrics = _finished_metrics(experiment, config, run_dirs[seed], wait=True)
        if metrics is None:
            raise ReproduceFailed(f"seed {seed} did not finish in {run_dirs[seed]}")
        metrics_list.append(metrics)
        scores = ", ".join(f"{part} {value:.4f}" for part, value in metrics["accuracy"].items())
        echo(f"seed {seed}: {scores} ({metrics['wall_time_s']} s)")
    records = experiment.results_records(config, request.run_name, metrics_list,
                                         [run_dirs[seed] for seed in seeds])
    written = {}
    for file, runs in records.items():
        path = write_results(request.model, request.task, request.command, runs,
                             package_versions(), name=file,
                             results_dir=Path(request.results_dir),
                             provenance=config.provenance, config=recorded)
        summary = json.loads(path.read_text())["summary"]
        written[path] = summary
        echo(f"{path}: mean {summary['mean']:.4f} median {summary['median']:.4f} "
             f"std {summary['std']:.4f} min {summary['min']:.4f} max {summary['max']:.4f} "
             f"over {summary['n']} seeds")
    return Reproduced(dict(zip(seeds, metrics_list)), written)


def check_continuation(experiment, config, parent: Path, seed: int) -> None:
    """A `RunDirectoryError` unless `parent` is a finished run of `config` for `seed` but
    for a smaller `training.max_steps`, trained to its own `max_steps` on this process's
    backend: what the longer run of the same seed continues from. Refused too: a learning
    rate that drops at half of `max_steps` (`training.drops_once` without a
    `learning_rate_drop_step`), which the longer run would drop elsewhere."""
    import keras

    metrics = read_metrics(parent)
    if not experiment.finished(metrics, config):
        raise RunDirectoryError(f"{parent}: no finished run to continue (--continue-from "
                                f"names finished runs of the same model under --runs-dir)")
    backend = metrics.get("backend", "tensorflow")
    if backend != keras.backend.backend():
        raise RunDirectoryError(f"{parent} was trained on the {backend} backend: continue it "
                                f"with --backend {backend}")
    earlier = read_run_file(parent / "config.json")
    wanted = config.to_json(seed)
    steps = earlier.get("training", {}).get("max_steps"), wanted["training"]["max_steps"]
    if steps[0] is None or steps[0] >= steps[1]:
        raise RunDirectoryError(f"{parent} trained {steps[0]} steps: a continuation needs "
                                f"more (training.max_steps {steps[1]})")
    if metrics["steps"] < steps[0]:
        raise RunDirectoryError(f"{parent} stopped early, at step {metrics['steps']} of "
                                f"{steps[0]}: a longer run would not have stopped there")
    if (config.training.drops_once and not config.training.learning_rate_drop_step
            and config.training.learning_rate_decay_factor != 1):
        raise RunDirectoryError("training.drops_once drops the learning rate at half of "
                                "max_steps, elsewhere in a longer run: set "
                                "training.learning_rate_drop_step to continue a run")
    earlier = comparable(dict(earlier, training=dict(earlier["training"],
                                                     max_steps=steps[1])))
    differences = config_differences(earlier, comparable(wanted))
    if differences:
        raise RunDirectoryError(f"{parent} is a run of another configuration: only "
                                f"training.max_steps may differ (differences: "
                                f"{'; '.join(differences)})")


def _train_unclaimed_seed(experiment, config, run_dir: Path, seed: int, command: str,
                          quiet: bool, echo, parent: Path | None = None):
    """Trains one seed unless it is finished or another process holds its lock."""
    with _seed_lock(run_dir, block=False) as claimed:
        if not claimed:
            echo(f"seed {seed}: being trained by another process")
        elif _finished_metrics(experiment, config, run_dir) is not None:
            # Reused only when it ran the configuration being recorded (ValueError otherwise).
            prepare_run_dir(run_dir, config.to_json(seed))
            echo(f"seed {seed}: already finished in {run_dir}")
        else:
            echo(f"seed {seed}: training {run_dir}")
            experiment.train(config, run_dir, seed=seed, verbose=0 if quiet else 1,
                             command=command, warm_start_from=parent)


def _finished_metrics(experiment, config, run_dir: Path, wait: bool = False):
    """The metrics of a finished seed (waiting for its lock if asked), else None."""
    with _seed_lock(run_dir, block=wait):
        metrics_file = run_dir / "metrics.json"
        metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    return metrics if experiment.finished(metrics, config) else None


@contextlib.contextmanager
def _seed_lock(run_dir: Path, block: bool):
    """Yields whether this process holds the seed's lock (always True when blocking)."""
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    with open(run_dir.parent / f"{run_dir.name}.lock", "a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | (0 if block else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
