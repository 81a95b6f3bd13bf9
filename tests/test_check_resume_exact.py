"""`scripts/check_resume_exact.py`. Its full check compiles with XLA for minutes, so it runs as a
script (results/checks/paper_regime_resume_exact.json); tests/test_training.py checks that a
resumed run equals a straight one to the last bit without XLA."""

import importlib.util
import sys
from pathlib import Path

sys.path.insert(0, str(Path("scripts").resolve()))
spec = importlib.util.spec_from_file_location("check_resume_exact",
                                              "scripts/check_resume_exact.py")
check_resume_exact = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_resume_exact)


def test_too_few_steps_to_stop_between_checkpoints_is_one_clear_line(capsys):
    assert check_resume_exact.main(["--steps", "6"]) == 2
    error = capsys.readouterr().err
    assert error == ("error: --steps must be at least 12 (got 6): the run is stopped between "
                     "two checkpoints\n")
