"""`tools/check_resume_exact.py` (`compgen_tf.analysis.resume_check`). Its full check compiles
with XLA for minutes, so it runs as a tool (results/checks/paper_regime_resume_exact.json);
tests/test_training.py checks that a resumed run equals a straight one to the last bit without
XLA."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The tool imports the package as installed; here, the checkout's.
ENV = dict(os.environ, PYTHONPATH=str(ROOT))


def test_too_few_steps_to_stop_between_checkpoints_is_one_clear_line():
    tool = subprocess.run([sys.executable, "tools/check_resume_exact.py", "--steps", "6"],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    assert tool.returncode == 2
    assert tool.stderr == ("error: --steps must be at least 12 (got 6): the run is stopped "
                           "between two checkpoints\n")


def test_the_package_refuses_too_few_steps_and_reads_a_runs_losses(tmp_path):
    from compgen_tf.analysis import resume_check

    with pytest.raises(ValueError, match="steps must be at least 12, got 11"):
        resume_check.resume_exactness("configs/syntactic_attention/paper_regime.json", 11)
    (tmp_path / "history.jsonl").write_text(
        json.dumps({"step": 2, "loss": 0.5}) + "\n" + json.dumps({"step": 4, "loss": 0.25}) + "\n")
    assert resume_check.losses(tmp_path) == [[2, 0.5], [4, 0.25]]
