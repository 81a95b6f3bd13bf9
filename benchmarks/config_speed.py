"""Training time per step of two or more configurations of one SCAN model, in one run.

    python benchmarks/config_speed.py --family syntactic_attention \\
        --configs configs/syntactic_attention/default.json,configs/syntactic_attention/X.json \\
        [--steps 400] [--repeats 3] [--out results/benchmarks/....json]

A configuration that changes the model (tying, a mask) can change the cost of a step; the
number of steps a seed runs is fixed by the configuration's `training.max_steps` and early
stopping, so step time is what decides a seed's run time. Each repeat trains every
configuration once from scratch, in turn (A, B, A, B, ...), so that a change in the machine's
load reaches them all alike; the first step's tracing is included, as in `training_speed.py`.
Reports each configuration's median milliseconds per step and its ratio to the first.
Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_output import emit  # noqa: E402
from training_speed import FAMILIES, train_once  # noqa: E402
from compgen_tf.versions import package_versions  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    scan_families = sorted(name for name, spec in FAMILIES.items() if spec[3] == "scan")
    parser.add_argument("--family", required=True, choices=scan_families)
    parser.add_argument("--configs", required=True,
                        help="comma-separated configuration files; the first is the reference")
    parser.add_argument("--steps", type=int, default=400, help="training steps per run")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each configuration")
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    configs = args.configs.split(",")
    missing = [name for name in configs if not Path(name).is_file()]
    if missing:
        parser.error(f"no such configuration file: {', '.join(missing)}")
    if len(configs) < 2 or args.steps < 1 or args.repeats < 1:
        parser.error("give at least two configurations, --steps >= 1 and --repeats >= 1")

    times = {name: [] for name in configs}
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            for index, name in enumerate(configs):
                run_dir = Path(folder) / f"{index}_{repeat}"
                timing = train_once(args.family, args.steps, run_dir, config_file=name)
                times[name].append(1000.0 * timing["wall_time_s"] / args.steps)
    reference = statistics.median(times[configs[0]])
    result = {"benchmark": "config_speed",
              "command": "python benchmarks/config_speed.py " + shlex.join(argv),
              "cpu_count": os.cpu_count(), "versions": package_versions(),
              "family": args.family, "steps": args.steps, "repeats": args.repeats,
              "configs": {name: {"ms_per_step": [round(t, 2) for t in values],
                                 "median_ms_per_step": round(statistics.median(values), 2),
                                 "ratio_to_first": round(statistics.median(values) / reference, 3)}
                          for name, values in times.items()}}
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
