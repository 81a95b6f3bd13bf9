"""`scripts/check_resume_exact.py`: a run repeats, and resumes after a kill, to the last bit."""

import importlib.util
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path("scripts").resolve()))
spec = importlib.util.spec_from_file_location("check_resume_exact",
                                              "scripts/check_resume_exact.py")
check_resume_exact = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_resume_exact)


def test_a_batch_one_run_repeats_and_resumes_to_the_last_bit(tmp_path, capsys):
    # The paper regime's settings without XLA, which takes minutes to compile; the committed
    # check (results/checks/paper_regime_resume_exact.json) covers the compiled path.
    config = tmp_path / "batch1.json"
    config.write_text(json.dumps({
        "base": str(Path("configs/syntactic_attention/paper_regime.json").resolve()),
        "training": {"jit_compile": False, "unroll": False}}))
    out = tmp_path / "check.json"
    assert check_resume_exact.main(["--config", str(config), "--steps", "12",
                                    "--out", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["stopped_after"] == 7 and result["checkpoint_every"] == 2
    assert result["largest_weight_difference"] == {"straight_vs_repeat": 0.0,
                                                   "straight_vs_resumed": 0.0}
    logged = result["losses"]
    assert [step for step, _ in logged["straight"]] == [4, 8, 12]
    assert logged["straight"] == logged["repeat"] == logged["resumed"]
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1]) == result


def test_too_few_steps_to_stop_between_checkpoints_is_one_clear_line(capsys):
    assert check_resume_exact.main(["--steps", "6"]) == 2
    error = capsys.readouterr().err
    assert error == ("error: --steps must be at least 12 (got 6): the run is stopped between "
                     "two checkpoints\n")
