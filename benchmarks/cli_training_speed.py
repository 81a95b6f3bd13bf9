"""Training time of every family through the public training command, on any version.

    python benchmarks/cli_training_speed.py [--families seq2seq,meta_seq2seq,...] [--out FILE]

`training_speed.py` calls the library's run functions, whose names and arguments change when
the experiments are restructured; this script times the same short runs through the command
every version has, `python -m compgen_tf.train`, so that `compare_commits.py` can hold any two
versions against each other:

    python benchmarks/compare_commits.py --old 6b689e7 --rounds 2 \\
        --out results/benchmarks/x.json -- benchmarks/cli_training_speed.py

Each family trains from scratch with its committed configuration for a fixed number of
steps, validating halfway and at the end on a small carved validation set and scoring
nothing else; the figures are the run's own `wall_time_s` from `metrics.json` (training,
first-step tracing included, validation and scoring excluded), the time per step, and the
time per step of the second half (`history.jsonl`'s elapsed time between the two
validations, the second validation included): most batch shapes have been traced or
compiled by then, so it is closer to a long run's step than the whole run's mean, which a
compilation per batch shape (JAX, XLA) dominates in runs this short. The command runs
from the checkout this script lies in (its parent folder is put first on `PYTHONPATH`).

`--backends tensorflow,jax` times each family on both Keras backends, one after the other
(the JAX figure includes its compilations, one per batch shape, as TensorFlow's includes its
tracing):

    python benchmarks/cli_training_speed.py --backends tensorflow,jax \
        --out results/benchmarks/cli_training_speed_backends.json
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmark_output import emit

CHECKOUT = Path(__file__).resolve().parents[1]
# family -> (flag naming its data, split or task, training steps)
FAMILIES = {
    "seq2seq": ("--split", "simple", 300),
    "equivariant_seq2seq": ("--split", "addprim_jump", 60),
    "syntactic_attention": ("--split", "addprim_jump", 200),
    "counting_seq2seq": ("--split", "simple", 200),
    "meta_seq2seq": ("--task", "mutual_exclusivity", 80),
    "symbol_convolution": ("--task", "composition", 1000),
    "mlp_baseline": ("--task", "composition", 1500),
    "recurrent_baseline": ("--task", "composition", 600),
    "stack_lstm": ("--task", "palindromes", 40),
    "lstm_baseline": ("--task", "palindromes", 100),
    "transformer": ("--split", "simple", 100),
}


def train_once(family: str, run_dir: Path, backend: str | None = None) -> dict:
    """Trains `family` for its steps in `run_dir` (on `backend`: `--backend`, which versions
    before 0.2.0's JAX training lack; None: the command's default); returns its training
    time."""
    flag, data, steps = FAMILIES[family]
    command = [sys.executable, "-m", "compgen_tf.train", "--model", family, flag, data,
               *(["--backend", backend] if backend else []),
               "--seed", "0", "--output", str(run_dir), "--quiet",
               "--set", f"training.max_steps={steps}",
               "--set", f"training.eval_every={steps // 2}",
               "--set", f"training.checkpoint_every={steps}",
               # every run to its last step: no early stop at the halfway validation
               "--set", "training.patience=1000", "--set", "training.stop_at_accuracy=1.01"]
    if flag == "--split":
        command += ["--set", "data.validation_fraction=0.02", "--evaluate-splits", "validation"]
    elif family == "meta_seq2seq":
        command += ["--set", "data.validation_episodes=1"]
    env = {**os.environ, "PYTHONPATH": str(CHECKOUT), "TF_CPP_MIN_LOG_LEVEL": "2"}
    done = subprocess.run(command, cwd=CHECKOUT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{family}: {shlex.join(command)} exited {done.returncode}: "
                           f"{done.stderr.strip()[-500:]}")
    metrics = json.loads((run_dir / "metrics.json").read_text())
    seconds = metrics["wall_time_s"]
    halfway, end = (json.loads(line)["elapsed_s"]
                    for line in (run_dir / "history.jsonl").read_text().splitlines())
    return {"wall_time_s": seconds, "ms_per_step": round(1000 * seconds / steps, 2),
            "second_half_ms_per_step": round(1000 * (end - halfway) / (steps - steps // 2), 2)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"comma-separated, from {', '.join(FAMILIES)}")
    parser.add_argument("--backends",
                        help="comma-separated Keras backends (tensorflow, jax): each family "
                             "trains on each in turn, keys <family>_<backend>_...; default: "
                             "the command's own backend, keys <family>_...")
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    families = args.families.split(",")
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown families {unknown}; choose from {sorted(FAMILIES)}")
    result = {"benchmark": "cli_training_speed",
              "command": "python benchmarks/cli_training_speed.py " + shlex.join(argv),
              "cpu_count": os.cpu_count()}
    backends = args.backends.split(",") if args.backends else [None]
    with tempfile.TemporaryDirectory() as folder:
        for family in families:
            for backend in backends:  # one family on every backend in a row: the same load
                name = f"{family}_{backend}" if backend else family
                timing = train_once(family, Path(folder) / name, backend)
                result.update({f"{name}_{key}": value for key, value in timing.items()})
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
