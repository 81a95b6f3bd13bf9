"""Which committed results files were trained by other numerics than today's, and which of
their seeds `reproduce --check` should train again (`tools/check_stale_results.py`).

A file is listed when `compgen_tf.experiments.staleness.results_state` calls it "changed"
(a seed trained before a recorded numerics change that affects it) or "unknown" (a seed
whose commit is not recorded or not in the checkout). Each listed file names the seed a
check trains (its lowest seed) and that seed's recorded wall time, so that checks can be
chosen by what they cost.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

from compgen_tf.experiments.results import load_results
from compgen_tf.experiments.staleness import results_state
from compgen_tf.reporting.results_files import read_results_dir

# The states a file is listed in.
MARKED = ("changed", "unknown")


def stale_results(results_dir, repo_dir=None) -> list[dict]:
    """Every results file under `results_dir` whose state is "changed" or "unknown".

    Args:
        results_dir: a results directory (`results/<model>/<name>.json`, re-run sets
            `results/<set>/<model>/<name>.json`; benchmark and other files are skipped).
        repo_dir: the git checkout to ask (default: the package's own).

    Returns:
        One dict per listed file, in path order: `path` (relative to `results_dir`),
        `model`, `state`, `changes` (`{"commit", "date", "what"}` of each change that makes
        a seed "changed"), `seeds` (`{"seed", "commit", "state", "wall_time_s"}` each),
        `changed_seeds`, `unknown_seeds`, `check_seed` (the lowest seed) and
        `check_wall_time_s` (its recorded wall time, None when not recorded).

    Raises:
        `compgen_tf.reporting.results_files.ReportError` for a malformed results file.
    """
    results_dir = Path(results_dir)
    # read_results_dir notes every JSON file without runs (checks, plots) on stderr; the
    # listing needs only the results files' paths.
    with contextlib.redirect_stderr(io.StringIO()):
        results, _, reruns = read_results_dir(results_dir)
    listed = []
    for entry in sorted([*results.values(), *reruns.values()], key=lambda e: e["path"]):
        document = load_results(results_dir / entry["path"])
        state = results_state(document, repo_dir)
        if state.state not in MARKED:
            continue
        wall_times = {run["seed"]: run.get("wall_time_s") for run in document["runs"]}
        seeds = [{"seed": seed, "commit": code.commit, "state": code.state,
                  "wall_time_s": wall_times[seed]} for seed, code in state.seeds.items()]
        check_seed = min(state.seeds)
        listed.append({
            "path": entry["path"], "model": document["model"], "state": state.state,
            "changes": [{"commit": change.commit, "date": change.date, "what": change.what}
                        for change in state.changes],
            "seeds": seeds, "changed_seeds": state.seeds_in("changed"),
            "unknown_seeds": state.seeds_in("unknown"), "check_seed": check_seed,
            "check_wall_time_s": wall_times[check_seed]})
    return listed


def check_file_name(entry: dict) -> str:
    """`stale_check_<model>_<name>_seed<S>.json` for a listed file (`<set>_` first for a
    file of a re-run set), where its check is written."""
    parts = Path(entry["path"]).with_suffix("").parts
    return f"stale_check_{'_'.join(parts)}_seed{entry['check_seed']}.json"


def checks_within(listed: list[dict], max_minutes: float) -> tuple[list[dict], list[dict]]:
    """(the listed files whose check seed recorded a wall time under `max_minutes`, the
    others: no wall time recorded, or a longer one)."""
    chosen, left = [], []
    for entry in listed:
        seconds = entry["check_wall_time_s"]
        (chosen if seconds is not None and seconds < 60 * max_minutes else left).append(entry)
    return chosen, left
