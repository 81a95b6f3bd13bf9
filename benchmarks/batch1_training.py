"""Step time of a batch-1 training run: plain, XLA, XLA with unrolled recurrences.

    python benchmarks/batch1_training.py [--config configs/syntactic_attention/paper_regime.json]
        [--steps 1500] [--variants plain xla xla_unroll]
        [--out results/benchmarks/syntactic_attention_batch1_xla.json]

Trains the config from scratch through `python -m compgen_tf.train` once per variant:
`training.jit_compile` false (plain) or true (xla), and true with `training.unroll` (one
compiled step per padded shape, recurrences written out: xla_unroll). Each run validates
every `steps / 3` updates; the step time is taken from the later intervals, less one
validation (the run's own `evaluation_time_s`, the time of its last validation pass). The
first interval holds most compilations; with xla_unroll a shape first met later is compiled
then, inside a later interval. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

from benchmark_output import emit  # noqa: E402


VARIANTS = {"plain": {"jit_compile": "false", "unroll": "false"},
            "xla": {"jit_compile": "true", "unroll": "false"},
            "xla_unroll": {"jit_compile": "true", "unroll": "true"}}


def timed_run(config, steps, variant, folder):
    run_dir = Path(folder) / variant
    every = steps // 3
    subprocess.run([sys.executable, "-m", "compgen_tf.train", "--model", "syntactic_attention",
                    "--split", "addprim_jump", "--config", str(config), "--steps", str(steps),
                    "--set", f"training.eval_every={every}",
                    "--set", f"training.checkpoint_every={every}",
                    *(item for key, value in VARIANTS[variant].items()
                      for item in ("--set", f"training.{key}={value}")),
                    "--evaluate-splits", "validation", "--output", str(run_dir), "--quiet"],
                   check=True, cwd=REPOSITORY,
                   env={**os.environ, "PYTHONPATH": str(REPOSITORY)})
    history = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    validation_s = json.loads((run_dir / "metrics.json").read_text())["evaluation_time_s"]
    elapsed = [0.0] + [row["elapsed_s"] for row in history]
    intervals = [b - a for a, b in zip(elapsed, elapsed[1:])]
    later = [(seconds - validation_s) / every for seconds in intervals[1:]]
    return {"first_interval_s": round(intervals[0], 1),
            "later_intervals_s": [round(s, 1) for s in intervals[1:]],
            "validation_s": validation_s,
            "step_ms": round(1000 * sum(later) / len(later), 1)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/syntactic_attention/paper_regime.json")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS),
                        default=list(VARIANTS))
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        runs = {variant: timed_run(args.config, args.steps, variant, folder)
                for variant in args.variants}
    first = args.variants[0]
    emit({"benchmark": "batch1_training", "config": args.config, "steps": args.steps,
          "command": "python benchmarks/batch1_training.py " + " ".join(
              sys.argv[1:] if argv is None else argv),
          "cpu_count": os.cpu_count(), **runs,
          f"step_ratio_over_{first}": {variant: round(run["step_ms"] / runs[first]["step_ms"], 2)
                                       for variant, run in runs.items()},
          "hours_for_200000_steps": {variant: round(run["step_ms"] * 200_000 / 3.6e6, 2)
                                     for variant, run in runs.items()}}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
