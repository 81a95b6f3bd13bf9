"""What a tool does with a result: record its command line, print one JSON line, optionally
write it to a file."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def command_line(tool: str, argv=None) -> str:
    """The command line that runs `tools/<tool>` with `argv`.

    Args:
        tool: the tool's file name, e.g. `"length_clause_coverage.py"`.
        argv: its arguments; None for the process's own (`sys.argv[1:]`).

    Returns:
        `"python tools/<tool> ARGS"`, the arguments joined by spaces.
    """
    return f"python tools/{tool} " + " ".join(sys.argv[1:] if argv is None else argv)


def emit(result: dict, out: str | None, tool: str, argv=None) -> None:
    """Adds `result["command"]`, prints `result` as one JSON line and writes it to `out`.

    Args:
        result: the tool's result, a JSON-serializable dict; `"command"` is set in it.
        out: a file to write the line to (its folder is made), or None.
        tool: the tool's file name under `tools/`.
        argv: the tool's arguments; None for the process's own.

    Returns:
        None.
    """
    result["command"] = command_line(tool, argv)
    line = json.dumps(result)
    print(line)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(line + "\n")


def read_test_errors(run_dir) -> list[dict]:
    """The wrong test translations of a finished run, the rows of its `errors_test.jsonl`.

    Args:
        run_dir: a run directory written by `train` or `reproduce`.

    Returns:
        One dict a wrong translation (`command`, `expected`, `predicted`), in file order.

    Raises:
        FileNotFoundError: the run has no `errors_test.jsonl`; the message names the file.
    """
    errors = Path(run_dir) / "errors_test.jsonl"
    if not errors.is_file():
        raise FileNotFoundError(f"{errors} does not exist (a finished run writes it)")
    return [json.loads(line) for line in errors.read_text().splitlines() if line.strip()]


def official_or_dev_provenance(split: str) -> dict:
    """The provenance of a diagnostic read off finished runs' test errors on `split`.

    Args:
        split: a SCAN split name.

    Returns:
        `{"kind": "validation", ...}` on a development split built from a training file;
        on an official split `{"kind": "post-hoc", ...}`: its test errors were read after
        their scores, so a setting that follows from them is post-hoc.
    """
    from tfds_scan.splits import DEV_CONFIG_NAMES

    if split in DEV_CONFIG_NAMES:
        return {"kind": "validation", "reason": "a development split built from a training "
                "file; a diagnostic, no setting chosen"}
    return {"kind": "post-hoc", "reason": "the official test errors of finished runs; a "
            "diagnostic read after the test scores, so any setting it leads to is post-hoc"}
