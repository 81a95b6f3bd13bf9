"""Wall time of test files under `make test`'s two workers: TensorFlow's default thread
pools against one thread per worker.

    python benchmarks/suite_threads.py [--files tests/test_training.py ...]
        [--repeats 2] [--out results/benchmarks/suite_threads.json]

Runs `pytest -q -n 2 --dist loadfile FILES` once per setting and repeat, the settings in
alternating order (A B, B A, ...) so that neither always runs first on a cold file cache:
  default     TensorFlow's own choice: on this machine a pool of one thread per core for
              ops and one for running them, in each worker process;
  one_thread  TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=1 (what the
              Makefile's `test` target sets), inherited by the tests' subprocesses.
Every run must pass; the wall times are pytest's own. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPOSITORY / "benchmarks"))

from benchmark_output import emit  # noqa: E402

SETTINGS = {"default": {},
            "one_thread": {"TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1",
                           "OMP_NUM_THREADS": "1"}}
# Two CPU-bound files that build, train and export models, as most of the suite does.
DEFAULT_FILES = ["tests/test_training.py", "tests/test_syntactic_attention.py"]


def timed_pytest(files, setting) -> float:
    env = {name: value for name, value in os.environ.items() if name not in SETTINGS["one_thread"]}
    env.update(SETTINGS[setting])
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist",
                             "loadfile", "-p", "no:cacheprovider", *files],
                            cwd=REPOSITORY, env=env, capture_output=True, text=True)
    last = result.stdout.strip().splitlines()[-1]
    if result.returncode != 0:
        raise SystemExit(f"pytest failed under {setting}: {last}")
    seconds = re.search(r" in ([\d.]+)s", last)
    if seconds is None:
        raise SystemExit(f"no time in pytest's last line: {last}")
    return float(seconds.group(1))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", nargs="+", default=DEFAULT_FILES)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    times = {setting: [] for setting in SETTINGS}
    for repeat in range(args.repeats):
        order = list(SETTINGS) if repeat % 2 == 0 else list(SETTINGS)[::-1]
        for setting in order:
            times[setting].append(timed_pytest(args.files, setting))
    means = {setting: round(statistics.mean(values), 1) for setting, values in times.items()}
    emit({"benchmark": "suite_threads", "files": args.files, "repeats": args.repeats,
          "command": "python benchmarks/suite_threads.py " + " ".join(argv or sys.argv[1:]),
          "cpu_count": os.cpu_count(), "wall_s": times, "mean_wall_s": means,
          "ratio_one_thread_over_default": round(means["one_thread"] / means["default"], 3)},
         args.out)


if __name__ == "__main__":
    main()
