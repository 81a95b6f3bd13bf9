"""Load test of one exported SavedModel, called the way a model server calls it.

    python benchmarks/serving_load.py --model-dir serving/models/scan/1 [--threads 4]
        [--requests 50] [--batch-sizes 1 16 256 4096] [--seconds 120] [--rounds 1]
        [--out FILE]

Loads the export once (TensorFlow only, as TF Serving does: no compgen_tf import), then for
each batch size sends `--requests` batches from `--threads` threads at once through the
`serving_default` signature. The batches are drawn from a fixed mix of SCAN commands and
bad ones (empty, unknown words, over-long, ungrammatical), so every answer can be compared
with the answer of the same command computed alone on one thread first. Prints one JSON
line: per batch size the p50/p99 latency of a call, commands/s, the number of mismatches
and exceptions (both must be 0), and the process's resident memory at the start, after
warm-up and at the end. Bounded: at most `--requests` calls per batch size and per thread,
and a batch size stops early after `--seconds`.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import shlex
import statistics
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

BAD_COMMANDS = ["", "   ", "jump dax", "walk " * 40, "twice", "and and and", "walk after",
                "left jump"]


def resident_mb() -> float:
    """This process's resident set size in MiB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return float("nan")


def scan_commands() -> list[str]:
    """SCAN's 20,910 commands, from tfds_scan/grammar.py alone (pure Python: not the
    package, which imports TFDS)."""
    path = Path(__file__).resolve().parents[1] / "tfds_scan" / "grammar.py"
    spec = importlib.util.spec_from_file_location("scan_grammar", path)
    grammar = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grammar)
    return grammar.all_commands()


def one_command_per_word_count() -> list[str]:
    """The first SCAN command of each length (1 to 9 words): a warm-up that compiles every
    width of an `--xla-single-command` export, as a deployment's warm-up requests should."""
    first = {}
    for command in scan_commands():
        first.setdefault(len(command.split()), command)
    return [first[n] for n in sorted(first)]


def command_pool(size: int, seed: int) -> list[str]:
    """`size` commands: SCAN commands from the whole grammar and one bad command in eight."""
    rng = np.random.default_rng(seed)
    commands = scan_commands()
    pool = [commands[i] for i in rng.integers(0, len(commands), size)]
    for i in range(0, size, 8):
        pool[i] = BAD_COMMANDS[(i // 8) % len(BAD_COMMANDS)]
    return pool


def run_load(model_dir, threads=4, requests=50, batch_sizes=(1, 16, 256, 4096), seconds=120.0,
             pool_size=4096, seed=0, rounds=1) -> dict:
    """The load test; returns the result dict (see the module docstring). With `rounds` > 1
    the sweep over batch sizes is repeated: memory that is stable after warm-up stays at the
    first round's level (`rss_mb_after_round`)."""
    rss_start = resident_mb()
    serve = tf.saved_model.load(str(model_dir)).signatures["serving_default"]

    def call(commands):
        out = serve(commands=tf.constant(commands, tf.string))
        return list(zip(out["actions"].numpy().tolist(), out["error"].numpy().tolist()))

    pool = command_pool(pool_size, seed)
    # The reference: every distinct command alone, on this thread, before any load.
    reference = {c: call([c])[0] for c in dict.fromkeys(pool)}
    rss_warm = resident_mb()
    result = {"threads": threads, "requests_per_thread": requests, "pool": len(pool),
              "distinct_commands": len(reference), "rss_mb_start": rss_start,
              "rss_mb_after_warm_up": rss_warm, "batch_sizes": {}, "rss_mb_after_round": [],
              "total_mismatches": 0, "total_exceptions": 0}
    for round_ in range(rounds):
        _sweep(call, pool, reference, result, threads, requests, batch_sizes, seconds,
               seed + round_)
        result["rss_mb_after_round"].append(resident_mb())
    result["rss_mb_end"] = resident_mb()
    return result


def _sweep(call, pool, reference, result, threads, requests, batch_sizes, seconds, seed):
    """One pass over the batch sizes: per-size figures of the last pass, totals of all."""
    for batch_size in batch_sizes:
        latencies, mismatches, errors = [], [], []
        lock = threading.Lock()
        deadline = time.perf_counter() + seconds

        def worker(index, batch_size=batch_size, latencies=latencies, mismatches=mismatches,
                   errors=errors, lock=lock, deadline=deadline):
            rng = np.random.default_rng([seed, batch_size, index])
            for _ in range(requests):
                if time.perf_counter() > deadline:
                    return
                batch = [pool[i] for i in rng.integers(0, len(pool), batch_size)]
                start = time.perf_counter()
                try:
                    answers = call(batch)
                except Exception as error:  # noqa: BLE001 (counted, not raised: it is the test)
                    with lock:
                        errors.append(repr(error))
                    continue
                elapsed = time.perf_counter() - start
                wrong = [c for c, a in zip(batch, answers) if reference[c] != a]
                with lock:
                    latencies.append(elapsed)
                    mismatches.extend(wrong)

        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(threads) as executor:
            list(executor.map(worker, range(threads)))
        wall = time.perf_counter() - started
        result["total_mismatches"] += len(mismatches)
        result["total_exceptions"] += len(errors)
        ms = sorted(1000 * t for t in latencies)
        result["batch_sizes"][str(batch_size)] = {
            "calls": len(ms),
            "p50_ms": round(statistics.median(ms), 2) if ms else None,
            "p99_ms": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 2) if ms else None,
            "commands_per_s": round(len(ms) * batch_size / wall, 1),
            "mismatches": len(mismatches), "mismatched_examples": mismatches[:5],
            "exceptions": len(errors), "exception_examples": errors[:3],
            "rss_mb_after": resident_mb()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--requests", type=int, default=50, help="calls per thread and size")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 16, 256, 4096])
    parser.add_argument("--seconds", type=float, default=120.0,
                        help="time limit per batch size")
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat the sweep to see whether memory stays stable")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    result = {"benchmark": "serving_load",
              "command": "python benchmarks/serving_load.py " + shlex.join(argv),
              "model_dir": args.model_dir, "cpu_count": os.cpu_count(),
              "tensorflow": tf.__version__,
              **run_load(args.model_dir, args.threads, args.requests, args.batch_sizes,
                         args.seconds, rounds=args.rounds)}
    line = json.dumps(result)
    print(line)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(line + "\n")
    return 1 if result["total_mismatches"] or result["total_exceptions"] else 0


if __name__ == "__main__":
    sys.exit(main())
