"""`tools/check_resume_exact.py` (`compgen_tf.analysis.resume_check`). Its full check compiles
with XLA for minutes, so it runs as a tool (results/checks/paper_regime_resume_exact.json);
here the tool runs whole on the paper regime without XLA and unrolling, 12 updates of batch 1
(about 25 s of CPU), and tests/test_training.py checks that a resumed run equals a straight one
to the last bit without XLA."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import keras
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


def test_the_tool_repeats_and_resumes_a_small_paper_regime_run_to_the_last_bit(
        tmp_path, monkeypatch, capsys):
    from compgen_tf.analysis import resume_check

    # The paper's regime (batch 1, no clipping, dropout 0.5) without XLA and unrolling, which
    # compile for minutes; the path through fit_split and the checkpoints is the same.
    config = tmp_path / "paper_regime_eager.json"
    config.write_text(json.dumps({
        "base": str(ROOT / "configs" / "syntactic_attention" / "paper_regime.json"),
        "training": {"jit_compile": False, "unroll": False}}))
    # The update each training call starts from: a resumed run that started over from
    # nothing would end on the same weights too, so the resume itself is checked.
    starts = []

    class FirstUpdate(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            if len(starts) < calls:
                starts.append(int(self.model.optimizer.iterations.numpy()))

    calls = 0
    fit_split = resume_check.fit_split

    def recorded_fit_split(*args, callbacks=(), **kwargs):
        nonlocal calls
        calls += 1
        return fit_split(*args, callbacks=[*callbacks, FirstUpdate()], **kwargs)

    monkeypatch.setattr(resume_check, "fit_split", recorded_fit_split)
    spec = importlib.util.spec_from_file_location("check_resume_exact",
                                                  ROOT / "tools" / "check_resume_exact.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    out = tmp_path / "resume_exact.json"
    assert tool.main(["--config", str(config), "--steps", "12", "--out", str(out)]) == 0

    result = json.loads(out.read_text())
    assert json.loads(capsys.readouterr().out) == result
    assert result["training"]["batch_size"] == 1 and result["training"]["clip_norm"] is None
    # Dropout on: its random draws must resume too.
    assert resume_check.load_config(config)["model_args"]["dropout"] == 0.5
    # Checkpoints every 2 updates; killed after update 7, between the third and the fourth.
    assert (result["steps"], result["checkpoint_every"], result["stopped_after"]) == (12, 2, 7)
    # straight, repeat, the killed run, and the killed run again: it resumed at update 6.
    assert starts == [0, 0, 0, 6]
    assert result["largest_weight_difference"] == {"straight_vs_repeat": 0.0,
                                                   "straight_vs_resumed": 0.0}
    straight = result["losses"]["straight"]
    assert [step for step, _ in straight] == [4, 8, 12]  # one line per evaluation
    assert result["losses"]["repeat"] == straight and result["losses"]["resumed"] == straight
