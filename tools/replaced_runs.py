"""Keep the figures of seeds that a results file no longer holds because they were trained again.

    python tools/replaced_runs.py --results results/MODEL/NAME.json --commit REV \
        --out results/checks/replaced_runs_NAME.json [--why "..."]

A seed trained again with the same command replaces its earlier run in the results file (a
results file holds one run per seed). The earlier run's figures stay quoted in the docs, so
they need a file that holds them: this reads the results file as it was at commit `REV`
(`git show REV:PATH`) and writes, for every seed whose run there is another training than
the run in the file now (another commit, wall time, length or backend; a seed only scored
again is the same training), the earlier run's scalar fields (test and validation figures,
best step, commit) and its validation curves, under `replaced`, with the revision read and
the reason given. Every run already recorded in `--out` is kept, so a file grows seed by
seed and keeps each earlier training of a seed trained more than twice.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

# The curves the docs quote from (validation BLEU and exact match by step); the training
# loss curve is left out: long, and quoted nowhere.
KEPT_LISTS = ("validation_bleu_curve", "validation_curve")


def earlier_results(path: Path, revision: str) -> dict:
    """The results file `path` as committed at `revision` in the repository holding it
    (`REV:./NAME` is git's path relative to the directory it runs in)."""
    path = path.resolve()
    shown = subprocess.run(["git", "show", f"{revision}:./{path.name}"], cwd=path.parent,
                           capture_output=True, text=True)
    if shown.returncode != 0:
        print(f"error: git show {revision}:{path}: {shown.stderr.strip()}", file=sys.stderr)
        raise SystemExit(2)
    return json.loads(shown.stdout)


def kept_fields(run: dict) -> dict:
    return {key: value for key, value in run.items()
            if not isinstance(value, (list, dict)) or key in KEPT_LISTS}


# What tells one training of a seed from another: a seed only scored again (a scoring fix)
# or given a new field keeps these.
TRAINING = ("commit", "wall_time_s", "steps", "best_step", "backend")


def training_of(run: dict) -> tuple:
    return tuple(run.get(key) for key in TRAINING)


def replaced_runs(now: dict, earlier: dict) -> list[dict]:
    """The runs of `earlier` whose seed `now` holds as another training."""
    current = {run["seed"]: run for run in now["runs"]}
    return [kept_fields(run) for run in earlier["runs"]
            if run["seed"] in current and training_of(current[run["seed"]]) != training_of(run)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, required=True)
    parser.add_argument("--commit", required=True, help="the revision holding the earlier runs")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--why", default="", help="why the seeds were trained again")
    args = parser.parse_args(argv)
    if not args.results.is_file():
        print(f"error: {args.results}: no such results file", file=sys.stderr)
        return 2
    now = json.loads(args.results.read_text())
    found = replaced_runs(now, earlier_results(args.results, args.commit))
    record = json.loads(args.out.read_text()) if args.out.is_file() else {
        "what": "runs replaced in a results file by the same seed trained again",
        "results": args.results.as_posix(), "replaced": []}
    if record["results"] != args.results.as_posix():
        print(f"error: {args.out} records {record['results']}, not {args.results}",
              file=sys.stderr)
        return 2
    # Every earlier training is kept, a seed trained a third time included: the docs may
    # quote any of them.
    known = {(run["seed"], training_of(run)) for run in record["replaced"]}
    record["replaced"] = sorted(
        record["replaced"]
        + [dict(run, read_from=f"git show {args.commit}:{args.results.as_posix()}",
                why=args.why) for run in found
           if (run["seed"], training_of(run)) not in known],
        key=lambda run: (run["seed"], run.get("commit") or ""))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{args.out}: {len(record['replaced'])} replaced run(s), seeds "
          f"{[run['seed'] for run in record['replaced']]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
