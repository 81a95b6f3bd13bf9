"""Train several seeds of any registered model and write its results file:
`python -m compgen_tf reproduce`.

    python -m compgen_tf reproduce --model seq2seq --split simple --seeds 3
    python -m compgen_tf reproduce --model meta_seq2seq --task add_jump_permutation --seeds 3
    python -m compgen_tf reproduce --model stack_lstm --task palindromes --seeds 5

Each seed is an ordinary run directory (`runs/<model>/<name>/seed<N>`); seeds
that already finished are not trained again, interrupted ones resume, and a finished seed
of another configuration is refused. The results go to `results/<model>/<name>.json`
(name = the split or task unless `--name` is given, e.g. for an ablation config; a toy task
with several test splits writes one file per test split, e.g. `palindromes_in_domain` and
`palindromes_long`, with `--name`'s suffix after the task). A results file that already
holds seeds keeps them (`--first-seed` adds more) and refuses another configuration. Its
`provenance` is the configuration file's (how its settings were chosen); settings changed
with `--set`, `--steps` or an ablation flag are not on record and are labelled so. The
command recorded there leaves out `--jobs`, `--runs-dir` and `--results-dir`, which change
where and how fast, not what.

`--jobs N` trains N seeds at a time in separate processes.

`reproduce --check results/<model>/<name>.json --seed N` trains one committed seed again from
the command recorded for it and prints how far the new scores are from the recorded ones
(`compgen_tf.experiments.check`). A process claims a
seed by holding an exclusive lock on `seed<N>.lock` beside its run directory
while it trains, so any number of `reproduce` commands sharing a runs
directory (on one machine or on a shared file system with working `flock`)
split the seeds between them: none is trained twice, and each command waits for
the seeds the others are training before it writes the summary.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import shlex
import subprocess
import sys
from pathlib import Path

from compgen_tf import registry
from compgen_tf.experiments.config import ConfigError
from compgen_tf.experiments.episodes import ablation_overrides
from compgen_tf.experiments.experiment import prepare_run_dir
from compgen_tf.experiments.results import (RESULTS_DIR, earlier_results, without_options,
                                            write_results)
from compgen_tf.versions import package_versions

COMMAND = "python -m compgen_tf reproduce"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, choices=sorted(registry.MODELS))
    task = parser.add_mutually_exclusive_group(required=True)
    task.add_argument("--split", dest="task", metavar="SPLIT",
                      help="SCAN split of a SCAN model")
    task.add_argument("--task", dest="task", metavar="TASK",
                      help="task of meta_seq2seq (episodes) or of a toy-task model")
    parser.add_argument("--seeds", type=int, default=3, help="number of seeds (default: 3)")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="train seeds FIRST..FIRST+N-1 (default: 0)")
    parser.add_argument("--config", help="configuration file (default: configs/MODEL/TASK.json)")
    parser.add_argument("--name", help="run and results name (default: the split or task)")
    parser.add_argument("--steps", type=int, help="override training.max_steps")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one configuration value (repeatable)")
    parser.add_argument("--no-support-loss", action="store_true",
                        help="meta_seq2seq ablation: --set model_args.support_loss=false")
    parser.add_argument("--no-decoder-attention", action="store_true",
                        help="meta_seq2seq ablation: --set model_args.decoder_attention=false")
    parser.add_argument("--runs-dir", default="runs", help="parent of the run directories")
    parser.add_argument("--results-dir", default=str(RESULTS_DIR))
    parser.add_argument("--jobs", type=int, default=1,
                        help="seeds trained at a time, each in its own process")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--no-results", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if any(arg == "--check" or arg.startswith("--check=") for arg in argv):
        from compgen_tf.experiments import check

        return check.main(argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1 or args.first_seed < 0:
        parser.error("--seeds and --jobs must be at least 1, --first-seed at least 0")
    spec = registry.spec(args.model)
    experiment = spec.experiment
    flag = "--split" if experiment.kind == "scan" else "--task"
    if _option(argv, "--split" if flag == "--task" else "--task") is not None:
        print(f"error: {args.model} trains on a {flag}, one of: {', '.join(spec.tasks)}",
              file=sys.stderr)
        return 2
    if (args.no_support_loss or args.no_decoder_attention) and args.model != "meta_seq2seq":
        print("error: --no-support-loss and --no-decoder-attention are meta_seq2seq ablations",
              file=sys.stderr)
        return 2
    overrides = list(args.set) + ablation_overrides(args)
    name = args.name or args.task
    try:
        config = experiment.resolve_config(args.model, args.task, args.config, overrides,
                                           args.steps)
        # The provenance goes to the results file's top level, not into its configuration.
        recorded = {key: value for key, value in experiment.recorded_config(config).items()
                    if key != "provenance"}
        results_files = [Path(args.results_dir) / args.model / f"{file}.json"
                         for file in experiment.results_names(config, name)]
        if not args.no_results:
            # A results file of another configuration is refused now, not after training.
            for path in results_files:
                earlier_results(path, args.task, recorded)
    except (ConfigError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    # The recorded command leaves out what only says where files go or how many processes
    # share the work, so that it reproduces the results from the repository root.
    command = f"{COMMAND} " + shlex.join(
        without_options(argv, ("--jobs", "--runs-dir", "--results-dir")))
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    run_dirs = {seed: Path(args.runs_dir) / args.model / name / f"seed{seed}" for seed in seeds}
    helpers = [subprocess.Popen([sys.executable, "-m", "compgen_tf", "reproduce",
                                 *without_options(argv, ("--jobs",)), "--no-results"])
               for _ in range(min(args.jobs, args.seeds) - 1)]
    try:
        for seed in seeds:
            _train_unclaimed_seed(experiment, config, run_dirs[seed], seed, command,
                                  args.quiet)
    except ValueError as error:  # a finished run directory of another configuration
        print(f"error: {error}", file=sys.stderr)
        for helper in helpers:
            helper.wait()
        return 2
    failed = [helper.args for helper in helpers if helper.wait() != 0]
    if failed:
        print(f"error: {len(failed)} helper process(es) failed", file=sys.stderr)
        return 1
    if args.no_results:
        return 0
    metrics_list = []
    for seed in seeds:
        metrics = _finished_metrics(experiment, config, run_dirs[seed], wait=True)
        if metrics is None:
            print(f"error: seed {seed} did not finish in {run_dirs[seed]}", file=sys.stderr)
            return 1
        metrics_list.append(metrics)
        scores = ", ".join(f"{part} {value:.4f}" for part, value in metrics["accuracy"].items())
        print(f"seed {seed}: {scores} ({metrics['wall_time_s']} s)", flush=True)
    records = experiment.results_records(config, name, metrics_list,
                                         [run_dirs[seed] for seed in seeds])
    for file, runs in records.items():
        path = write_results(args.model, args.task, command, runs, package_versions(),
                             name=file, results_dir=Path(args.results_dir),
                             provenance=config["provenance"], config=recorded)
        summary = json.loads(path.read_text())["summary"]
        print(f"{path}: mean {summary['mean']:.4f} median {summary['median']:.4f} "
              f"std {summary['std']:.4f} min {summary['min']:.4f} max {summary['max']:.4f} "
              f"over {summary['n']} seeds")
    return 0


def _option(argv, name):
    """The value of option `name` in `argv` (`--name V` or `--name=V`), or None."""
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _train_unclaimed_seed(experiment, config: dict, run_dir: Path, seed: int, command: str,
                          quiet: bool):
    """Trains one seed unless it is finished or another process holds its lock."""
    with _seed_lock(run_dir, block=False) as claimed:
        if not claimed:
            print(f"seed {seed}: being trained by another process", flush=True)
        elif _finished_metrics(experiment, config, run_dir) is not None:
            # Reused only when it ran the configuration being recorded (ValueError otherwise).
            prepare_run_dir(run_dir, dict(config, seed=seed))
            print(f"seed {seed}: already finished in {run_dir}", flush=True)
        else:
            print(f"seed {seed}: training {run_dir}", flush=True)
            experiment.train(config, run_dir, seed=seed, verbose=0 if quiet else 1,
                             command=command)


def _finished_metrics(experiment, config: dict, run_dir: Path, wait: bool = False):
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

