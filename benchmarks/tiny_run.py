"""One tiny `train` command end to end, as a test or a user starts it: seconds of wall time.

    python benchmarks/tiny_run.py [--model seq2seq] [--split simple_p1] [--steps 4] [--out FILE]

Runs `python -m compgen_tf.train` in a process of its own on a model of 8 units (every
import, the data, the traces of the train step and of decoding, a validation, the final
scoring of train, validation and test) and times the whole command. What it measures is the
fixed cost every run pays: what the test suite pays for each of its runs, and what a user
pays before the first step of a real one. Compare versions with `compare_commits.py`.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmark_output import emit  # noqa: E402

SIZES = {"seq2seq": ["model_args.embedding_dim=8", "model_args.hidden_units=8"],
         "syntactic_attention": ["model_args.semantic_dim=8", "model_args.syntax_embedding_dim=8",
                                 "model_args.syntax_units=8", "model_args.encoder_units=8"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="seq2seq", choices=sorted(SIZES))
    parser.add_argument("--split", default="simple_p1")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    overrides = SIZES[args.model] + ["model_args.max_output_length=8",
                                     f"training.eval_every={args.steps}"]
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "compgen_tf.train", "--model", args.model, "--split",
                   args.split, "--steps", str(args.steps), "--output", str(Path(folder) / "run"),
                   "--quiet", *[a for o in overrides for a in ("--set", o)]]
        started = time.perf_counter()
        subprocess.run(command, cwd=ROOT, check=True, capture_output=True,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=str(ROOT)))
        seconds = time.perf_counter() - started
    emit({"benchmark": "tiny_run",
          "command": "python benchmarks/tiny_run.py " + shlex.join(argv or sys.argv[1:]),
          "model": args.model, "split": args.split, "steps": args.steps,
          "seconds": round(seconds, 2),
          "machine": f"{platform.machine()}, {os.cpu_count()} cores"}, args.out)


if __name__ == "__main__":
    main()
