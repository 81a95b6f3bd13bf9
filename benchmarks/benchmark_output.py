"""What every benchmark script does with its result: one JSON line on stdout, optionally a file."""

from __future__ import annotations

import json
from pathlib import Path


def emit(result: dict, out: str | None) -> None:
    """Prints `result` as one JSON line and, when `out` is given, writes it there too."""
    line = json.dumps(result)
    print(line)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(line + "\n")
