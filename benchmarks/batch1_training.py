"""Step time of a batch-1 training run with and without XLA (Syntactic Attention's paper regime).

    python benchmarks/batch1_training.py [--config configs/syntactic_attention/paper_regime.json]
        [--steps 1500] [--out results/benchmarks/syntactic_attention_batch1_xla.json]

Trains the config twice from scratch through `python -m compgen_tf.train`, with
`training.jit_compile` false and true, validating every `steps / 3` updates, and reads each
run's `history.jsonl`. The first interval holds XLA's compilations; the step time is taken
from the later intervals, less one validation (the run's own `evaluation_time_s`, the time of
its last validation pass). Run it on an idle machine.
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


def timed_run(config, steps, jit, folder):
    run_dir = Path(folder) / f"jit_{jit}"
    every = steps // 3
    subprocess.run([sys.executable, "-m", "compgen_tf.train", "--model", "syntactic_attention",
                    "--split", "addprim_jump", "--config", str(config), "--steps", str(steps),
                    "--set", f"training.eval_every={every}",
                    "--set", f"training.checkpoint_every={every}",
                    "--set", f"training.jit_compile={'true' if jit else 'false'}",
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
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        runs = {f"jit_compile_{jit}".lower(): timed_run(args.config, args.steps, jit, folder)
                for jit in (False, True)}
    no_xla, xla = runs["jit_compile_false"]["step_ms"], runs["jit_compile_true"]["step_ms"]
    emit({"benchmark": "batch1_training", "config": args.config, "steps": args.steps,
          "command": "python benchmarks/batch1_training.py " + " ".join(
              sys.argv[1:] if argv is None else argv),
          "cpu_count": os.cpu_count(), **runs,
          "step_ratio_xla_over_plain": round(xla / no_xla, 2),
          "hours_for_200000_steps": {"plain": round(no_xla * 200_000 / 3.6e6, 2),
                                     "xla": round(xla * 200_000 / 3.6e6, 2)}}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
