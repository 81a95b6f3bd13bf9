"""`tools/`: command-line tools outside the package, which import it as installed."""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = sorted((ROOT / "tools").glob("*.py"))


def imported_modules(tree):
    for node in ast.walk(tree):  # inside functions too
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module or ""


@pytest.mark.parametrize("tool", TOOLS, ids=lambda path: path.name)
def test_a_tool_imports_the_package_and_no_other_tool_nor_any_file_by_path(tool):
    source = tool.read_text()
    tree = ast.parse(source)
    siblings = {path.stem for path in TOOLS}
    assert not [m for m in imported_modules(tree) if m.split(".")[0] in siblings], tool.name
    assert "sys.path" not in source and "spec_from_file_location" not in source, tool.name
    assert "parents[" not in source, f"{tool.name} looks up the checkout's root"
    assert f"python tools/{tool.name}" in ast.get_docstring(tree), \
        f"{tool.name}: its docstring shows its command line"


def test_a_tool_runs_from_outside_the_checkout(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2")
    shown = subprocess.run([sys.executable, str(ROOT / "tools/length_clause_coverage.py"),
                            "--help"], cwd=tmp_path, env=env, capture_output=True, text=True,
                           timeout=300)
    assert shown.returncode == 0, shown.stderr[-3000:]
    assert shown.stdout.startswith("usage: length_clause_coverage.py")
