"""What the result scripts do with a result: record their command line, print one JSON line,
optionally write it to a file."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def emit(result: dict, out: str | None, script: str, argv=None) -> None:
    """Adds `result["command"]` (`python scripts/<script> ARGS`, the arguments `argv` or the
    process's), prints `result` as one JSON line and writes it to `out` when given."""
    result["command"] = f"python scripts/{script} " + " ".join(
        sys.argv[1:] if argv is None else argv)
    line = json.dumps(result)
    print(line)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(line + "\n")
