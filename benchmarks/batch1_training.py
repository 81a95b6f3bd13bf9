"""Step time of a batch-1 training run: plain, XLA, XLA with unrolled recurrences, and
under glibc's malloc or jemalloc.

    python benchmarks/batch1_training.py [--config configs/syntactic_attention/paper_regime.json]
        [--steps 1500] [--variants plain xla xla_unroll] [--allocators glibc jemalloc]
        [--out results/benchmarks/syntactic_attention_batch1_xla.json]

Trains the config from scratch through `python -m compgen_tf.train` once per variant:
`training.jit_compile` false (plain) or true (xla), and true with `training.unroll` (one
compiled step per padded shape, recurrences written out: xla_unroll). Each run validates
every `steps / 3` updates; the step time is taken from the later intervals, less one
validation (the run's own `evaluation_time_s`, the time of its last validation pass). The
first interval holds most compilations; with xla_unroll a shape first met later is compiled
then, inside a later interval. Run it on an idle machine.

`--allocators glibc jemalloc` runs each variant twice, the second time with jemalloc
preloaded and told to keep freed memory (`JEMALLOC_CONF` below). XLA's CPU runtime
allocates a step's temporaries (about 50 MB for the unrolled step at batch 1) at every
execution and frees them after it; glibc serves blocks that large with a fresh mmap each
time (above its 32 MB ceiling on the mmap threshold), so every step faults its pages in
again, and jemalloc's default purges them on free for the same effect. The minor page
faults of each training process are reported per step (compilation included).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

from benchmark_output import emit  # noqa: E402


# Blocks above jemalloc's oversize threshold (8 MB) go to an arena that returns them to the
# system on free; with the threshold at 0 they stay in the ordinary arenas, and with no decay
# their pages stay mapped for the next step.
JEMALLOC_CONF = "oversize_threshold:0,dirty_decay_ms:-1,muzzy_decay_ms:-1"
DEFAULT_JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"

VARIANTS = {"plain": {"jit_compile": "false", "unroll": "false"},
            "xla": {"jit_compile": "true", "unroll": "false"},
            "xla_unroll": {"jit_compile": "true", "unroll": "true"}}


def allocator_environment(allocator, jemalloc):
    """The environment of a training process for `allocator` ("glibc" or "jemalloc")."""
    environment = {**os.environ, "PYTHONPATH": str(REPOSITORY)}
    if allocator == "jemalloc":
        environment.update(LD_PRELOAD=jemalloc, MALLOC_CONF=JEMALLOC_CONF)
    return environment


def timed_run(config, steps, variant, folder, allocator="glibc", jemalloc=DEFAULT_JEMALLOC):
    run_dir = Path(folder) / f"{variant}_{allocator}"
    every = steps // 3
    faults_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
    subprocess.run([sys.executable, "-m", "compgen_tf.train", "--model", "syntactic_attention",
                    "--split", "addprim_jump", "--config", str(config), "--steps", str(steps),
                    "--set", f"training.eval_every={every}",
                    "--set", f"training.checkpoint_every={every}",
                    *(item for key, value in VARIANTS[variant].items()
                      for item in ("--set", f"training.{key}={value}")),
                    "--evaluate-splits", "validation", "--output", str(run_dir), "--quiet"],
                   check=True, cwd=REPOSITORY, env=allocator_environment(allocator, jemalloc))
    faults = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - faults_before
    history = [json.loads(line) for line in (run_dir / "history.jsonl").read_text().splitlines()]
    validation_s = json.loads((run_dir / "metrics.json").read_text())["evaluation_time_s"]
    elapsed = [0.0] + [row["elapsed_s"] for row in history]
    intervals = [b - a for a, b in zip(elapsed, elapsed[1:])]
    later = [(seconds - validation_s) / every for seconds in intervals[1:]]
    return {"first_interval_s": round(intervals[0], 1),
            "later_intervals_s": [round(s, 1) for s in intervals[1:]],
            "validation_s": validation_s,
            "step_ms": round(1000 * sum(later) / len(later), 1),
            "minor_page_faults_per_step": round(faults / steps),
            # The same seed's losses and validation scores: equal when only speed differs.
            "losses": [row["loss"] for row in history],
            "val_accuracies": [row["val_accuracy"] for row in history]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/syntactic_attention/paper_regime.json")
    parser.add_argument("--steps", type=int, default=1500)
    parser.add_argument("--variants", nargs="+", choices=sorted(VARIANTS),
                        default=list(VARIANTS))
    parser.add_argument("--allocators", nargs="+", choices=("glibc", "jemalloc"),
                        default=["glibc"])
    parser.add_argument("--jemalloc", default=DEFAULT_JEMALLOC,
                        help="the jemalloc library to preload (Debian: libjemalloc2)")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if "jemalloc" in args.allocators and not Path(args.jemalloc).is_file():
        parser.error(f"no jemalloc library at {args.jemalloc} (install libjemalloc2 or "
                     "pass --jemalloc PATH)")
    # One allocator keeps the variants' names as keys (as in the results files before it).
    pairs = [(variant, allocator) for variant in args.variants for allocator in args.allocators]
    key = ((lambda variant, allocator: variant) if len(args.allocators) == 1
           else (lambda variant, allocator: f"{variant}/{allocator}"))
    with tempfile.TemporaryDirectory() as folder:
        runs = {key(variant, allocator): timed_run(args.config, args.steps, variant, folder,
                                                   allocator, args.jemalloc)
                for variant, allocator in pairs}
    first = next(iter(runs))
    emit({"benchmark": "batch1_training", "config": args.config, "steps": args.steps,
          "command": "python benchmarks/batch1_training.py " + " ".join(
              sys.argv[1:] if argv is None else argv),
          "cpu_count": os.cpu_count(), "allocators": args.allocators,
          **({"jemalloc_conf": JEMALLOC_CONF} if "jemalloc" in args.allocators else {}),
          **runs,
          f"step_ratio_over_{first}": {name: round(run["step_ms"] / runs[first]["step_ms"], 2)
                                       for name, run in runs.items()},
          "hours_for_200000_steps": {name: round(run["step_ms"] * 200_000 / 3.6e6, 2)
                                     for name, run in runs.items()}}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
