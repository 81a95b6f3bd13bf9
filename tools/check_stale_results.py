"""Lists the results files trained by other numerics than today's; optionally checks them.

    python tools/check_stale_results.py --list [--results-dir results] \
        [--out results/checks/stale_results.json]
    python tools/check_stale_results.py --run --max-minutes 30 [--results-dir results] \
        [--runs-dir runs/stale_check]

A results file is listed when a seed of it trained before a numerics change recorded in
`compgen_tf/resources/numerics_changes.json` that affects its model and configuration
("changed"), or when a seed's commit is not recorded or not in this checkout ("unknown";
`compgen_tf.experiments.staleness`). Each listed file gives its seeds' commits, states and
recorded wall times, and the seed a check trains: its lowest.

`--run` trains that seed again with `python -m compgen_tf reproduce --check FILE --seed S`
for every listed file whose seed recorded a wall time under `--max-minutes`, one at a time,
each into `<results-dir>/checks/stale_check_<model>_<name>_seed<S>.json` (a re-run set's
file: `stale_check_<set>_<model>_<name>_seed<S>.json`), which says whether today's code
lands in band (within the file's seeds' [min, max] test accuracy). Files without a recorded
wall time, or with a longer one, are named and skipped. Exit code 0 when every check ran; 1
when one failed; 2 on bad arguments or a malformed results file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

TOOL = "check_stale_results.py"
# A listing of the code's history against the files; it chooses nothing and reads no score.
PROVENANCE = {"kind": "check", "reason": "lists which committed seeds ran before a recorded "
              "numerics change; no setting is chosen with it and no score is read"}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--list", action="store_true", help="list the marked files")
    mode.add_argument("--run", action="store_true",
                      help="reproduce --check the lowest seed of each marked file")
    parser.add_argument("--results-dir", type=Path, default=Path("results"))
    parser.add_argument("--out", help="--list: also write the listing as JSON")
    parser.add_argument("--max-minutes", type=float,
                        help="--run: only files whose seed trained in less than this")
    parser.add_argument("--runs-dir", type=Path, default=Path("runs/stale_check"),
                        help="--run: where the checks' run directories go")
    args = parser.parse_args(argv)
    if args.run and (args.max_minutes is None or args.max_minutes <= 0):
        parser.error("--run needs a positive --max-minutes")
    if not args.results_dir.is_dir():
        print(f"error: {args.results_dir} is not a directory", file=sys.stderr)
        return 2

    from compgen_tf.analysis.output import command_line
    from compgen_tf.analysis.stale_results import check_file_name, checks_within, stale_results
    from compgen_tf.reporting.results_files import ReportError
    from compgen_tf.versions import source_commit

    try:
        listed = stale_results(args.results_dir)
    except (ReportError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.list:
        listing = {"commit": source_commit(), "provenance": PROVENANCE, "files": listed,
                   "command": command_line(TOOL, argv)}
        for entry in listed:
            minutes = ("?" if entry["check_wall_time_s"] is None
                       else f"{entry['check_wall_time_s'] / 60:.1f}")
            print(f"{entry['state']:8} {entry['path']}  seeds changed {entry['changed_seeds']}"
                  f" unknown {entry['unknown_seeds']}; seed {entry['check_seed']}: "
                  f"{minutes} min")
        print(f"{len(listed)} files marked")
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text(json.dumps(listing, indent=2) + "\n")
        return 0

    chosen, left = checks_within(listed, args.max_minutes)
    for entry in left:
        print(f"skipped {entry['path']}: seed {entry['check_seed']} recorded "
              + ("no wall time" if entry["check_wall_time_s"] is None else
                 f"{entry['check_wall_time_s'] / 60:.1f} min"))
    failed = 0
    for entry in chosen:
        out = args.results_dir / "checks" / check_file_name(entry)
        runs_dir = args.runs_dir / out.stem
        command = [sys.executable, "-m", "compgen_tf", "reproduce", "--check",
                   str(args.results_dir / entry["path"]), "--seed", str(entry["check_seed"]),
                   "--runs-dir", str(runs_dir), "--out", str(out)]
        print("running: " + " ".join(command[1:]), flush=True)
        if subprocess.run(command).returncode:
            failed += 1
            print(f"check of {entry['path']} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
