"""Train several seeds and commit the summary: `python -m compgen_tf.reproduce`.

    python -m compgen_tf.reproduce --model seq2seq --split simple --seeds 3

Each seed is an ordinary run directory (`runs/<model>/<name>/seed<N>`); seeds
that already finished are not trained again, interrupted ones resume. The
results go to `results/<model>/<name>.json` (name = the split unless
`--name` is given, e.g. for an ablation config).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from compgen_tf import registry
from compgen_tf.config import ConfigError, apply_overrides, config_path, load_config
from compgen_tf.results import RESULTS_DIR, run_record, write_results
from compgen_tf.versions import package_versions


def main(argv=None) -> int:
    import tfds_scan

    parser = argparse.ArgumentParser(prog="python -m compgen_tf.reproduce", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", required=True, choices=sorted(registry.MODELS))
    parser.add_argument("--split", required=True, choices=tfds_scan.CONFIG_NAMES, metavar="SPLIT")
    parser.add_argument("--seeds", type=int, default=3, help="number of seeds: 0..N-1")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--config", help="configuration file (default: configs/MODEL/SPLIT.json)")
    parser.add_argument("--name", help="results file name (default: the split)")
    parser.add_argument("--steps", type=int, help="override training.max_steps")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--runs-dir", default="runs")
    parser.add_argument("--results-dir", default=str(RESULTS_DIR))
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    name = args.name or args.split
    try:
        config = load_config(args.config or config_path(args.model, args.split))
        overrides = args.set + ([f"training.max_steps={args.steps}"] if args.steps else [])
        config = apply_overrides(config, overrides)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    config.update(model=args.model, split=args.split)
    from compgen_tf.runs import train_run

    command = "python -m compgen_tf.reproduce " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    runs = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        run_dir = Path(args.runs_dir) / args.model / name / f"seed{seed}"
        metrics_file = run_dir / "metrics.json"
        metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
        if "steps" not in metrics or "test" not in metrics.get("accuracy", {}):
            print(f"seed {seed}: training {run_dir}", flush=True)
            metrics = train_run(config, run_dir, seed=seed, verbose=0 if args.quiet else 1,
                                command=command)
        else:
            print(f"seed {seed}: already finished in {run_dir}", flush=True)
        runs.append(run_record(metrics))
        print(f"seed {seed}: test {runs[-1]['test_accuracy']:.4f} "
              f"validation {runs[-1]['val_accuracy']:.4f} ({runs[-1]['wall_time_s']} s)",
              flush=True)
    path = write_results(args.model, args.split, command, runs, package_versions(), name=name,
                         results_dir=Path(args.results_dir), config=config)
    summary = json.loads(path.read_text())["summary"]
    print(f"{path}: mean {summary['mean']:.4f} median {summary['median']:.4f} "
          f"std {summary['std']:.4f} over {summary['n']} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
