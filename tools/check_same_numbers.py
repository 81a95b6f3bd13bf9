"""Trains one short run of every model family on two versions of the code and compares them.

    python tools/check_same_numbers.py --old 6b689e7 [--new WORKTREE] [--steps 300] \\
        [--families seq2seq,meta_seq2seq] --out results/checks/refactor_same_numbers.json

A refactor must not change a number. For each family this runs the public training command
(`python -m compgen_tf.train --model M --split S|--task T --seed 0 --steps N`) once on each
version, each from its own checkout (`--old`: a commit, checked out as a detached `git
worktree`; `--new`: a commit, or `WORKTREE` for the files as they are now), with one
TensorFlow thread so that the sums run in one order, and compares what the runs wrote:

- every weight of `best_model.keras` (the model selected on validation), as the multiset of
  (shape, SHA-256 of the bytes) -- so a layer renamed or moved by the refactor still matches
  when its numbers are the same, and one changed bit does not;
- every number of `metrics.json` and `history.jsonl` except times and the recorded versions
  and command (which name the code that ran).

It reads the files with `h5py` and `json` and imports neither version of the package, so the
two versions may differ in their Python API. Writes one JSON file; exit code 1 when any
family differs, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import h5py
import numpy as np

# One short run per family: (model, the flag that names its data, the split or task).
FAMILIES = {
    "seq2seq": ("--split", "simple"),
    "equivariant_seq2seq": ("--split", "addprim_jump"),
    "syntactic_attention": ("--split", "addprim_jump"),
    "counting_seq2seq": ("--split", "simple"),
    "transformer": ("--split", "simple"),
    "meta_seq2seq": ("--task", "mutual_exclusivity"),
    "symbol_convolution": ("--task", "rule_learning"),
    "mlp_baseline": ("--task", "composition"),
    "recurrent_baseline": ("--task", "rule_learning"),
    "stack_lstm": ("--task", "palindromes"),
    "lstm_baseline": ("--task", "palindromes"),
}
# Fields that name the code or the clock, not the numbers the code computed.
NOT_COMPARED = {"versions", "command", "commit", "wall_time_s", "evaluation_time_s",
                "elapsed_s", "time_s", "run_dir", "output"}


# A check of the code, not a result: it trains every family at its committed configuration
# (whose own provenance is in configs/) and chooses nothing.
PROVENANCE = {"kind": "check", "reason": "compares two versions of the code at the committed "
              "configurations, one seed, a few hundred steps; no setting is chosen with it "
              "and no test score is read (SCAN runs score validation only)"}


def weight_digests(keras_file: Path) -> list:
    """Sorted (shape, sha256) of every array in a `.keras` file's weights."""
    with zipfile.ZipFile(keras_file) as archive:
        data = archive.read("model.weights.h5")
    digests = []
    with h5py.File(io.BytesIO(data), "r") as weights:
        def visit(_, item):
            if isinstance(item, h5py.Dataset):
                array = np.ascontiguousarray(item[()])
                digests.append([list(array.shape), str(array.dtype),
                                hashlib.sha256(array.tobytes()).hexdigest()])
        weights.visititems(visit)
    return sorted(digests)


def numbers(value):
    """`value` without the fields in NOT_COMPARED (recursively) and without strings that are
    paths of this run."""
    if isinstance(value, dict):
        return {key: numbers(item) for key, item in value.items()
                if key not in NOT_COMPARED and not key.endswith("_time_s")}
    if isinstance(value, list):
        return [numbers(item) for item in value]
    return value


def train(checkout: Path, model: str, flag: str, data: str, steps: int, out: Path) -> dict:
    """Runs the training command in `checkout`; returns what it wrote, reduced to numbers."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "TF_NUM_INTRAOP_THREADS": "1",
           "TF_NUM_INTEROP_THREADS": "1", "OMP_NUM_THREADS": "1", "KERAS_BACKEND": "tensorflow"}
    command = [sys.executable, "-m", "compgen_tf.train", "--model", model, flag, data,
               "--seed", "0", "--steps", str(steps), "--output", str(out), "--quiet"]
    if flag == "--split":
        command += ["--evaluate-splits", "validation"]
    started = time.monotonic()
    done = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1:]}",
                "seconds": round(time.monotonic() - started, 1)}
    history = [numbers(json.loads(line))
               for line in (out / "history.jsonl").read_text().splitlines() if line.strip()]
    return {"weights": weight_digests(out / "best_model.keras"),
            "metrics": numbers(json.loads((out / "metrics.json").read_text())),
            "history": history, "seconds": round(time.monotonic() - started, 1)}


def checkout(repository: Path, commit: str, folder: Path) -> Path:
    """`commit` as a detached worktree under `folder`; `WORKTREE` is `repository` itself."""
    if commit == "WORKTREE":
        return repository
    path = folder / f"checkout_{len(list(folder.glob('checkout_*')))}_{commit[:12]}"
    subprocess.run(["git", "-C", str(repository), "worktree", "add", "--detach", "-q",
                    str(path), commit], check=True)
    return path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="commit of the code before the change")
    parser.add_argument("--new", default="WORKTREE",
                        help="commit after the change, or WORKTREE (default)")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cache", type=Path,
                        help="folder that keeps each run of the --old commit for reuse "
                             "(the --new side always trains)")
    args = parser.parse_args(argv)
    families = [name for name in args.families.split(",") if name]
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown or args.steps < 1:
        print(f"check_same_numbers: unknown families {unknown} (known: {sorted(FAMILIES)})"
              if unknown else f"check_same_numbers: --steps must be positive, got {args.steps}",
              file=sys.stderr)
        return 2
    repository = Path(subprocess.run(["git", "rev-parse", "--show-toplevel"], check=True,
                                     capture_output=True, text=True).stdout.strip())
    versions = {}
    for role in ("old", "new"):
        commit = getattr(args, role)
        versions[role] = commit if commit == "WORKTREE" else subprocess.run(
            ["git", "-C", str(repository), "rev-parse", commit], check=True,
            capture_output=True, text=True).stdout.strip()
    report = {"command": "python tools/check_same_numbers.py " + " ".join(
                  argv if argv is not None else sys.argv[1:]),
              "old": versions["old"], "new": versions["new"], "steps": args.steps,
              "provenance": PROVENANCE, "families": {}}
    if versions["new"] == "WORKTREE":  # which files those were: the commit, and any edits
        git = ["git", "-C", str(repository)]
        report["new_head"] = subprocess.run(git + ["rev-parse", "HEAD"], check=True,
                                            capture_output=True, text=True).stdout.strip()
        report["new_uncommitted_changes"] = bool(subprocess.run(
            git + ["status", "--porcelain", "--untracked-files=no"], check=True,
            capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory() as folder:
        trees = {role: checkout(repository, versions[role], Path(folder))
                 for role in ("old", "new")}
        try:
            for name in families:
                flag, data = FAMILIES[name]
                runs = {}
                for role in ("old", "new"):
                    cached = (args.cache / f"{versions[role]}_{name}_{args.steps}.json"
                              if args.cache and role == "old" and versions[role] != "WORKTREE"
                              else None)
                    if cached is not None and cached.exists():
                        runs[role] = json.loads(cached.read_text())
                        continue
                    runs[role] = train(trees[role], name, flag, data, args.steps,
                                       Path(folder) / role / name)
                    if cached is not None and "error" not in runs[role]:
                        cached.parent.mkdir(parents=True, exist_ok=True)
                        cached.write_text(json.dumps(runs[role]))
                same = {part: runs["old"].get(part) == runs["new"].get(part)
                        for part in ("weights", "metrics", "history")}
                ok = "error" not in runs["old"] and "error" not in runs["new"] and all(
                    same.values())
                report["families"][name] = {
                    "flag": flag, "data": data, "identical": ok, "same": same,
                    "weights": len(runs["old"].get("weights", [])),
                    "metrics_new": runs["new"].get("metrics"),
                    "errors": {role: runs[role]["error"] for role in runs
                               if "error" in runs[role]},
                    "seconds": {role: runs[role]["seconds"] for role in runs}}
                print(f"{name}: {'identical' if ok else 'DIFFERENT'} {same} "
                      f"{report['families'][name]['errors'] or ''}", flush=True)
        finally:
            for role, tree in trees.items():
                if tree != repository:
                    subprocess.run(["git", "-C", str(repository), "worktree", "remove",
                                    "--force", str(tree)], check=False)
    report["all_identical"] = all(f["identical"] for f in report["families"].values())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    return 0 if report["all_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
