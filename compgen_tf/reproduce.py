"""Train several seeds and commit the summary: `python -m compgen_tf.reproduce`.

    python -m compgen_tf.reproduce --model seq2seq --split simple --seeds 3
    python -m compgen_tf.reproduce --model meta_seq2seq --task add_jump_permutation --seeds 3
    python -m compgen_tf.reproduce --model stack_lstm --task palindromes --seeds 5

Every registered model: a model that trains on episodes or a toy task (`--task`) is handed
to its own tool (`compgen_tf.meta_training`, `compgen_tf.toy_runs`: the same seeds, run
directories and results files; see their `--help`).

Each seed is an ordinary run directory (`runs/<model>/<name>/seed<N>`); seeds
that already finished are not trained again, interrupted ones resume. The
results go to `results/<model>/<name>.json` (name = the split unless
`--name` is given, e.g. for an ablation config). The command recorded there leaves out
`--jobs`, `--runs-dir` and `--results-dir`, which change where and how fast, not what.

`--jobs N` trains N seeds at a time in separate processes. A process claims a
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
import importlib
import json
import shlex
import subprocess
import sys
from pathlib import Path

from compgen_tf import registry
from compgen_tf.config import ConfigError, apply_overrides, config_path, load_config
from compgen_tf.results import (RESULTS_DIR, earlier_results, run_record, without_options,
                                write_results)
from compgen_tf.versions import package_versions


def _option(argv, name):
    """The value of option `name` in `argv` (`--name V` or `--name=V`), or None."""
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def main(argv=None) -> int:
    import tfds_scan

    argv = sys.argv[1:] if argv is None else list(argv)
    model = _option(argv, "--model")
    if model in registry.TASK_MODELS:
        module = importlib.import_module(registry.TASK_MODELS[model])
        # meta-training has one model: its tool takes no --model.
        return module.main(without_options(argv, ("--model",)) if model == "meta_seq2seq"
                           else argv)

    parser = argparse.ArgumentParser(prog="python -m compgen_tf.reproduce", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, choices=sorted(registry.MODELS),
                        help="a SCAN model here; the others are handed to their own tool")
    parser.add_argument("--split", required=True, choices=tfds_scan.CONFIG_NAMES, metavar="SPLIT")
    parser.add_argument("--seeds", type=int, default=3, help="number of seeds: 0..N-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--config", help="configuration file (default: configs/MODEL/SPLIT.json)")
    parser.add_argument("--name", help="results file name (default: the split)")
    parser.add_argument("--steps", type=int, help="override training.max_steps")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--runs-dir", default="runs")
    parser.add_argument("--results-dir", default=str(RESULTS_DIR))
    parser.add_argument("--jobs", type=int, default=1,
                        help="seeds trained at a time, each in its own process")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--no-results", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1:
        parser.error("--seeds and --jobs must be at least 1")
    name = args.name or args.split
    try:
        config = load_config(args.config or config_path(args.model, args.split))
        overrides = args.set + ([f"training.max_steps={args.steps}"] if args.steps else [])
        config = apply_overrides(config, overrides)
        registry.check_model_args(args.model, config["model_args"])
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    config.update(model=args.model, split=args.split)
    if not args.no_results:
        try:
            earlier_results(Path(args.results_dir) / args.model / f"{name}.json", args.split,
                            config)
        except ValueError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2

    # The recorded command leaves out what only says where files go or how many processes
    # share the work, so that it reproduces the results from the repository root.
    command = "python -m compgen_tf.reproduce " + shlex.join(
        without_options(argv, ("--jobs", "--runs-dir", "--results-dir")))
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    run_dirs = {seed: Path(args.runs_dir) / args.model / name / f"seed{seed}" for seed in seeds}
    helpers = [subprocess.Popen([sys.executable, "-m", "compgen_tf.reproduce",
                                 *without_options(argv, ("--jobs",)), "--no-results"])
               for _ in range(min(args.jobs, args.seeds) - 1)]
    try:
        for seed in seeds:
            _train_unclaimed_seed(config, run_dirs[seed], seed, command, args.quiet)
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
    runs = []
    for seed in seeds:
        metrics = _finished_metrics(run_dirs[seed], wait=True)
        if metrics is None:
            print(f"error: seed {seed} did not finish in {run_dirs[seed]}", file=sys.stderr)
            return 1
        runs.append(run_record(metrics, run_dirs[seed]))
        print(f"seed {seed}: test {runs[-1]['test_accuracy']:.4f} "
              f"validation {runs[-1]['val_accuracy']:.4f} ({runs[-1]['wall_time_s']} s)",
              flush=True)
    path = write_results(args.model, args.split, command, runs, package_versions(), name=name,
                         results_dir=Path(args.results_dir), config=config)
    summary = json.loads(path.read_text())["summary"]
    print(f"{path}: mean {summary['mean']:.4f} median {summary['median']:.4f} "
          f"std {summary['std']:.4f} over {summary['n']} seeds")
    return 0


def _train_unclaimed_seed(config: dict, run_dir: Path, seed: int, command: str, quiet: bool):
    """Trains one seed unless it is finished or another process holds its lock."""
    from compgen_tf.runs import prepare_run_dir, train_run

    with _seed_lock(run_dir, block=False) as claimed:
        if not claimed:
            print(f"seed {seed}: being trained by another process", flush=True)
        elif _finished_metrics(run_dir) is not None:
            # Reused only when it ran the configuration being recorded (ValueError otherwise).
            prepare_run_dir(run_dir, dict(config, seed=seed))
            print(f"seed {seed}: already finished in {run_dir}", flush=True)
        else:
            print(f"seed {seed}: training {run_dir}", flush=True)
            train_run(config, run_dir, seed=seed, verbose=0 if quiet else 1, command=command)


def _finished_metrics(run_dir: Path, wait: bool = False):
    """The metrics of a finished seed (waiting for its lock if asked), else None."""
    with _seed_lock(run_dir, block=wait):
        metrics_file = run_dir / "metrics.json"
        metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    if "steps" not in metrics or "test" not in metrics.get("accuracy", {}):
        return None
    return metrics


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


if __name__ == "__main__":
    sys.exit(main())
