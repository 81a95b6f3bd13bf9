"""Single-command latency of a plain export beside an `--xla-single-command` export.

    python benchmarks/serving_latency.py --run runs/seq2seq/simple/seed0 [--calls 300]
        [--also old_xla=DIR ...] [--out results/benchmarks/serving_xla_single_command_seq2seq_simple.json]

Exports the run twice (`compgen_tf.models.export.export_model`, plain and with
`xla_single_command=True`) into a temporary folder, loads both SavedModels, and sends the
same single commands to each in turn, one call at a time on one thread, so that the machine's
load falls on both alike. Prints one JSON line: p50/p90/p99 latency per export, their ratio,
the first XLA call (the compilation of the first command's width), and the number of the
answers compared (warm-up calls included) that differ (must be 0). Before the warm-up
calls, every export answers one SCAN command of each length (1 to 9 words), so that each
width an XLA export compiles is compiled before the timing starts.

`--also NAME=DIR` adds a SavedModel exported elsewhere, for instance by an older commit
(`git worktree add /tmp/old <commit>`, then `python -m compgen_tf export` there): it is
timed in the same loop, so that old and new exports are measured beside each other in one
run, and its answers must equal the plain export's too.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmark_output import emit  # noqa: E402
from serving_load import command_pool, one_command_per_word_count  # noqa: E402


def percentile(values, q):
    return round(float(np.percentile(values, q)), 3)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="a trained SCAN run directory")
    parser.add_argument("--calls", type=int, default=300, help="single commands per export")
    parser.add_argument("--warm-up", type=int, default=20, help="calls not timed, per export")
    parser.add_argument("--also", action="append", default=[], metavar="NAME=DIR",
                        help="another SavedModel to time beside the two exports (repeatable)")
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)
    also = dict(item.split("=", 1) for item in args.also)
    if {"plain", "xla"} & set(also) or not all(also):
        parser.error("--also takes NAME=DIR with a NAME other than plain and xla")

    from compgen_tf.models.export import export_model
    from compgen_tf.experiments.experiment import load_run_model

    model = load_run_model(args.run)
    with tempfile.TemporaryDirectory() as folder:
        paths = {name: export_model(model, Path(folder) / name, xla_single_command=xla)
                 for name, xla in (("plain", False), ("xla", True))}
        paths.update(also)
        serve = {name: tf.saved_model.load(str(path)).signatures["serving_default"]
                 for name, path in paths.items()}
        pool = command_pool(args.warm_up + args.calls, seed=0)
        start = time.perf_counter()
        serve["xla"](commands=tf.constant(pool[:1]))
        first_xla_call_s = time.perf_counter() - start
        # One command of each length first: every compiled width exists before the timing
        # (a deployment sends such warm-up requests; serving/README.md).
        for command in one_command_per_word_count():
            for function in serve.values():
                function(commands=tf.constant([command]))
        latencies = {name: [] for name in serve}
        differences = 0
        for index, command in enumerate(pool):
            answers = {}
            for name, function in serve.items():
                start = time.perf_counter()
                out = function(commands=tf.constant([command]))
                elapsed = 1000.0 * (time.perf_counter() - start)
                answers[name] = [out[key].numpy().tolist() for key in ("actions", "error")]
                if index >= args.warm_up:
                    latencies[name].append(elapsed)
            differences += sum(answers[name] != answers["plain"] for name in serve)
    result = {
        "benchmark": "serving_latency", "run": str(args.run),
        "command": "python benchmarks/serving_latency.py " + " ".join(sys.argv[1:]
                                                                       if argv is None else argv),
        "cpu_count": os.cpu_count(), "tensorflow": tf.__version__, "calls": args.calls,
        "also": also,
        "first_xla_call_s": round(first_xla_call_s, 2), "answers_differing": differences,
        "answers_compared": len(pool),
        **{f"{name}_{stat}_ms": percentile(values, q) for name, values in latencies.items()
           for stat, q in (("p50", 50), ("p90", 90), ("p99", 99))},
    }
    result["p50_ratio_plain_over_xla"] = round(
        statistics.median(latencies["plain"]) / statistics.median(latencies["xla"]), 2)
    emit(result, args.out)
    return 0 if differences == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
