"""Runs one benchmark script on two versions of the code, interleaved, in one run.

    python benchmarks/compare_commits.py --old 781e0ab [--new WORKTREE] [--rounds 3] \\
        [--out results/benchmarks/x.json] -- benchmarks/seq2seq_speed.py --model ... --steps 5

Each round runs the script once from a checkout of `--old` (a `git worktree` in a temporary
folder) and once from `--new` (a commit, or `WORKTREE`, the files as they are now), old and new
alternating so that a change in the machine's load hits both alike (a script that the old
commit lacks is copied into its checkout and runs on its code). The script must print one
JSON line (see `benchmark_output.emit`) and put its own checkout first on `sys.path`, as every
script here does. Prints one JSON line: per version the median of every numeric field, and
new/old ratios.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmark_output import emit

REPOSITORY = Path(__file__).resolve().parents[1]


def checkout(commit: str, folder: Path) -> Path:
    """`commit` checked out under `folder` (detached worktree); `WORKTREE` is this tree."""
    if commit == "WORKTREE":
        return REPOSITORY
    path = folder / commit.replace("/", "_")
    subprocess.run(["git", "-C", str(REPOSITORY), "worktree", "add", "--detach", "-q", str(path),
                    commit], check=True)
    # A benchmark newer than the commit runs there from this tree's copy, on that commit's code.
    for script in (REPOSITORY / "benchmarks").glob("*.py"):
        if not (path / "benchmarks" / script.name).exists():
            shutil.copy(script, path / "benchmarks" / script.name)
    return path


def run_once(tree: Path, script_args: list[str]) -> dict:
    result = subprocess.run([sys.executable, str(tree / script_args[0]), *script_args[1:]],
                            cwd=tree, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{script_args[0]} failed in {tree}:\n{result.stderr[-2000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def medians(results: list[dict]) -> dict:
    numeric = [k for k, v in results[0].items() if isinstance(v, (int, float))
               and not isinstance(v, bool)]
    return {k: statistics.median(r[k] for r in results) for k in numeric}


# A measurement of the code's speed, not a result: the script times the committed
# configurations, chooses no setting and reads no test score.
PROVENANCE = {"kind": "check", "reason": "times two versions of the code on the committed "
              "configurations; no setting is chosen with it and no test score is read"}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--" not in argv:
        raise SystemExit("usage: compare_commits.py --old COMMIT [--new COMMIT] -- SCRIPT ARGS")
    split = argv.index("--")
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True)
    parser.add_argument("--new", default="WORKTREE")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out")
    args = parser.parse_args(argv[:split])
    script_args = argv[split + 1:]
    runs = {"old": [], "new": []}
    with tempfile.TemporaryDirectory() as folder:
        trees = {"old": checkout(args.old, Path(folder)), "new": checkout(args.new, Path(folder))}
        try:
            for _ in range(args.rounds):
                for side in ("old", "new"):
                    runs[side].append(run_once(trees[side], script_args))
        finally:
            for tree in trees.values():
                if tree != REPOSITORY:
                    subprocess.run(["git", "-C", str(REPOSITORY), "worktree", "remove", "--force",
                                    str(tree)], check=False)
    old, new = medians(runs["old"]), medians(runs["new"])
    # Rates (per second) and times (seconds, milliseconds a step): new/old of each.
    rates = [k for k in old if k.endswith(("_per_s", "_s", "_ms_per_step")) or "_per_s_" in k]
    emit({"benchmark": "compare_commits",
          "command": "python benchmarks/compare_commits.py " + shlex.join(argv),
          "old": args.old, "new": args.new, "rounds": args.rounds, "provenance": PROVENANCE,
          "old_median": old, "new_median": new,
          "new_over_old": {k: round(new[k] / old[k], 3) for k in rates if old[k]},
          "runs": runs}, args.out)


if __name__ == "__main__":
    main()
