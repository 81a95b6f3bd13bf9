"""Reading a results directory for the report: every results file checked, keyed by model
and name, and the benchmark files beside them.

A results file is `<results-dir>/<model>/<name>.json` (the schema of
`compgen_tf.experiments.results`); `<results-dir>/<set>/<model>/<name>.json` is a re-run set
(earlier results trained again on newer code); `<results-dir>/benchmarks/**.json` are speed
measurements. Nothing here knows where the directory is: the caller says.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from compgen_tf.experiments.config import PROVENANCE_KINDS, ConfigError, check_provenance
from compgen_tf.experiments.results import load_results

BENCHMARKS = "benchmarks"


class ReportError(ValueError):
    """A results file the report cannot use."""


# --------------------------------------------------------------------------- reading

def read_results_dir(results_dir: Path):
    """(results, benchmarks, reruns): results keyed by (model, name); benchmark documents by
    path; results of re-run sets (`<set>/<model>/<name>.json`, e.g. `core_0.2.0/`: earlier
    results trained again on newer code) keyed by (set, model, name)."""
    results, benchmarks, reruns = {}, {}, {}
    for path in sorted(results_dir.rglob("*.json"), key=lambda p: p.relative_to(results_dir)
                       .as_posix()):
        relative = path.relative_to(results_dir)
        try:
            document = json.loads(path.read_text())
        except ValueError as error:  # JSONDecodeError, UnicodeDecodeError (damaged bytes)
            raise ReportError(f"{path}: not valid JSON: {error}") from error
        if relative.parts[0] == BENCHMARKS:
            benchmarks[relative.as_posix()] = document
            continue
        if not isinstance(document, dict) or "runs" not in document:
            print(f"note: {path} has no 'runs': not a results file, skipped", file=sys.stderr)
            continue
        entry = _check_results(path, document)
        if len(relative.parts) == 3:
            entry["path"] = relative.as_posix()
            reruns[(relative.parts[0], entry["model"], path.stem)] = entry
            continue
        key = (entry["model"], path.stem)
        if key in results:
            raise ReportError(f"{path}: a second results file for model {key[0]!r} named "
                              f"{key[1]!r} (the other: {results[key]['path']})")
        entry["path"] = relative.as_posix()
        results[key] = entry
    return results, benchmarks, reruns


def _check_results(path: Path, document: dict) -> dict:
    try:
        load_results(path)
    except ValueError as error:
        raise ReportError(f"malformed results file {error}") from error
    runs = document["runs"]
    if not isinstance(runs, list) or not runs:
        raise ReportError(f"malformed results file {path}: 'runs' must be a non-empty list")
    for index, run in enumerate(runs):
        where = f"malformed results file {path}: runs[{index}]"
        if not isinstance(run, dict):
            raise ReportError(f"{where} is not an object")
        missing = {"seed", "test_accuracy"} - set(run)
        if missing:
            raise ReportError(f"{where} lacks {sorted(missing)}")
        for field in ("test_accuracy", "val_accuracy"):
            value = run.get(field)
            if field in run and (not isinstance(value, (int, float)) or isinstance(value, bool)
                                 or not 0.0 <= value <= 1.0):
                raise ReportError(f"{where}: {field} must be a fraction in [0, 1], got "
                                  f"{value!r}")
    if not isinstance(document["model"], str) or not document["model"]:
        raise ReportError(f"malformed results file {path}: 'model' must be a model name")
    if "provenance" not in document:
        raise ReportError(f"malformed results file {path}: missing keys ['provenance'] (how its "
                          f"configuration was chosen; see compgen_tf.experiments.results)")
    try:
        check_provenance(document["provenance"], origin=f"malformed results file {path}")
    except ConfigError as error:
        raise ReportError(str(error)) from error
    return {"model": document["model"], "split": document["split"], "runs": runs,
            "versions": document.get("versions", {}), "provenance": document["provenance"],
            "config": document.get("config")}


def pooled_entry(results: dict, model: str, name: str) -> dict | None:
    """Runs of `<name>_rep<R>` files pooled, for paper numbers averaged over data samples."""
    keys = sorted(k for k in results if k[0] == model and k[1].startswith(f"{name}_rep")
                  and k[1][len(name) + 4:].isdigit())
    if not keys:
        return None
    # Pooled files carry the least trustworthy of their provenances.
    provenances = [results[k]["provenance"] for k in keys]
    worst = max(provenances, key=lambda p: list(PROVENANCE_KINDS).index(p["kind"]))
    return {"model": model, "split": name, "pooled": [results[k]["path"] for k in keys],
            "runs": [run for k in keys for run in results[k]["runs"]], "keys": keys,
            "provenance": worst,
            # The samples differ in data, not in settings: the first one's configuration.
            "config": results[keys[0]].get("config")}
