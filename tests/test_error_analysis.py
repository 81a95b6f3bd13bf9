import json

import pytest

from compgen_tf.cli import error_analysis
from compgen_tf.reporting.error_analysis import classify_errors, error_kind

JUMP_TWICE = "I_JUMP I_JUMP"


@pytest.mark.parametrize("expected, predicted, kind, missing", [
    (JUMP_TWICE, "I_JUMP", "stops_early", []),
    (JUMP_TWICE, "", "stops_early", []),
    (JUMP_TWICE, "I_JUMP I_JUMP I_JUMP", "runs_over", []),
    ("I_TURN_LEFT I_JUMP", "I_TURN_LEFT I_WALK", "missing_action", ["I_JUMP"]),
    ("I_WALK I_JUMP", "I_JUMP I_WALK", "other", []),
    ("I_JUMP I_WALK I_JUMP", "I_JUMP I_WALK I_WALK I_JUMP", "other", []),
])
def test_each_error_gets_the_first_kind_that_applies(expected, predicted, kind, missing):
    assert error_kind(expected, predicted) == (kind, missing)


def test_a_correct_translation_is_not_an_error():
    with pytest.raises(ValueError, match="not an error"):
        error_kind(JUMP_TWICE, JUMP_TWICE)


def test_counts_tallies_and_examples():
    records = [{"command": "jump twice", "expected": JUMP_TWICE, "predicted": "I_JUMP"},
               {"command": "jump left", "expected": "I_TURN_LEFT I_JUMP",
                "predicted": "I_TURN_LEFT"},
               {"command": "jump and run", "expected": "I_JUMP I_RUN", "predicted": "I_WALK"}]
    analysis = classify_errors(records)
    assert analysis["errors"] == 3
    assert analysis["kinds"] == {"stops_early": 2, "runs_over": 0, "missing_action": 1,
                                 "other": 0}
    assert analysis["missing_actions"] == {"I_JUMP": 1, "I_RUN": 1}
    assert analysis["examples"]["stops_early"]["command"] == "jump twice"


def test_cli_writes_the_analysis_and_reports_a_missing_file(tmp_path, capsys):
    records = [{"command": "jump twice", "expected": JUMP_TWICE, "predicted": "I_JUMP"}]
    (tmp_path / "errors_test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert error_analysis.main(["--run", str(tmp_path)]) == 0
    assert "stops_early" in capsys.readouterr().out
    written = json.loads((tmp_path / "error_kinds_test.json").read_text())
    assert written["kinds"]["stops_early"] == 1
    assert error_analysis.main(["--run", str(tmp_path), "--split", "validation"]) == 2
    assert "does not exist" in capsys.readouterr().err
