"""`tools/export_exact_match.py` (`compgen_tf.analysis.export_check`): scoring a SavedModel's
string signature on a split."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tensorflow as tf

from compgen_tf.analysis import export_check

ROOT = Path(__file__).resolve().parents[1]
# The tool imports the package as installed; here, the checkout's.
ENV = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2")


def tool(*args):
    return subprocess.run([sys.executable, "tools/export_exact_match.py", *map(str, args)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)


def test_translates_in_batches_and_keeps_each_rows_error():
    calls = []

    def signature(commands):  # a stand-in for `serving_default`: echoes, refuses "twice"
        texts = [c.decode() for c in commands.numpy()]
        calls.append(len(texts))
        return {"actions": tf.constant(["" if t == "twice" else t.upper() for t in texts]),
                "error": tf.constant(["not a SCAN command" if t == "twice" else ""
                                      for t in texts])}

    actions, errors = export_check.translate_through(
        signature, ["walk", "twice", "run", "look", "jump"], batch=2)
    assert calls == [2, 2, 1]
    assert actions == ["WALK", "", "RUN", "LOOK", "JUMP"]
    assert errors == ["", "not a SCAN command", "", "", ""]


def test_refuses_a_folder_without_a_saved_model_and_an_unknown_split(tmp_path):
    refused = tool("--export", tmp_path, "--split", "length")
    assert refused.returncode == 2
    assert "has no saved_model.pb" in refused.stderr
    (tmp_path / "saved_model.pb").write_bytes(b"")
    refused = tool("--export", tmp_path, "--split", "no_such_split")
    assert refused.returncode == 2
    assert "no_such_split" in refused.stderr


def test_the_run_to_compare_must_be_a_run_of_the_split(tmp_path):
    with pytest.raises(FileNotFoundError, match="config.json does not exist"):
        export_check.run_to_compare(tmp_path, "simple", "test")
    (tmp_path / "config.json").write_text(json.dumps({"split": "length"}))
    with pytest.raises(ValueError, match="trained on length, not on --split simple"):
        export_check.run_to_compare(tmp_path, "simple", "test")
