"""`tools/sa_failure_modes.py` (`compgen_tf.analysis.failure_modes`): the failure mode of each
Syntactic Attention add-jump run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compgen_tf.analysis import failure_modes

ROOT = Path(__file__).resolve().parents[1]
# The tool imports the package as installed; here, the checkout's.
ENV = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2")


def tool(*args):
    return subprocess.run([sys.executable, "tools/sa_failure_modes.py", *map(str, args)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)

ALL_RIGHT = {"walk": True, "run": True, "look": True}


@pytest.mark.parametrize("bare, accuracy, with_walk_row, mode", [
    ({**ALL_RIGHT, "run": False}, 0.99, 0.99, "one_word_boundary"),  # the first class wins
    (ALL_RIGHT, 0.9, 0.1, "solved"),
    (ALL_RIGHT, 0.899, 0.9, "jump_row"),
    (ALL_RIGHT, 0.3, 0.5, "other"),
])
def test_each_run_gets_the_first_class_that_applies(bare, accuracy, with_walk_row, mode):
    assert failure_modes.classify(bare, accuracy, with_walk_row) == mode


def test_summary_counts_every_class():
    runs = {"a": {"mode": "solved"}, "b": {"mode": "solved"}, "c": {"mode": "other"},
            "d": {"mode": "one_word_boundary"}}
    assert failure_modes.summarize(runs) == {
        "n": 4, "counts": {"one_word_boundary": 1, "solved": 2, "jump_row": 0, "other": 1},
        "shares": {"one_word_boundary": 0.25, "solved": 0.5, "jump_row": 0.0, "other": 0.25}}


def test_a_tiny_add_jump_run_is_diagnosed(tmp_path):
    from compgen_tf.train import main as train

    run = tmp_path / "seed0"
    tiny = ["--set", "model_args.semantic_dim=8", "--set", "model_args.syntax_embedding_dim=8",
            "--set", "model_args.syntax_units=8", "--set", "model_args.encoder_units=8",
            "--set", "model_args.max_output_length=12", "--set", "training.eval_every=10",
            "--set", "data.validation_fraction=0.02"]
    assert train(["--model", "syntactic_attention", "--split", "addprim_jump", "--config",
                  "configs/syntactic_attention/default.json", "--steps", "10", *tiny,
                  "--evaluate-splits", "validation", "--output", str(run), "--quiet"]) == 0
    out = tmp_path / "modes.json"
    diagnosed = tool("--runs", run, "--sample", "20", "--out", out)
    assert diagnosed.returncode == 0, diagnosed.stderr[-3000:]
    record = json.loads(out.read_text())
    diagnosis = record["diagnoses"][str(run)]
    # The training file holds each bare verb but jump's, which is the one add-jump adds.
    assert set(diagnosis["bare_verbs_correct"]) == {"walk", "run", "look"}
    assert set(diagnosis["one_word_translations"]) == {"walk", "run", "look", "jump"}
    assert diagnosis["mode"] == failure_modes.classify(
        diagnosis["bare_verbs_correct"], diagnosis["sample_accuracy"],
        diagnosis["sample_accuracy_with_walk_row"])
    assert record["summary"]["n"] == 1 and record["summary"]["counts"][diagnosis["mode"]] == 1
    # The same run added to a file of another run: diagnosed alike, summarized with it.
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps({"sample": 20, "sample_seed": 0, "command": "python first",
                                   "diagnoses": {"runs/seed9": {"mode": "other"}}}))
    added = tool("--runs", run, "--sample", "20", "--add-to", earlier)
    assert added.returncode == 0, added.stderr[-3000:]
    merged = json.loads(earlier.read_text())
    assert merged["diagnoses"][str(run)] == diagnosis
    assert merged["summary"]["n"] == 2
    assert merged["summary"]["counts"]["other"] == 1 + (diagnosis["mode"] == "other")
    assert merged["command"] == "python first"
    assert merged["additions"][0]["runs"] == [str(run)]


def test_a_folder_that_is_not_a_run_is_refused(tmp_path):
    refused = tool("--runs", tmp_path)
    assert refused.returncode == 2
    assert "not a run directory (no config.json)" in refused.stderr


def test_kept_seeds_are_classed_from_what_was_kept():
    results = {"runs": [{"seed": s, "test_accuracy": a}
                        for s, a in [(0, 0.95), (1, 0.3), (2, 0.0), (3, 0.0)]]}
    swaps = [{"sample": 500, "accuracy_on_sample": {
        "runs/syntactic_attention/addprim_jump/seed1": {"jump_row_from_walk": 0.99},
        "runs/syntactic_attention/addprim_jump/seed2": {"jump_row_from_walk": 0.0},
        # another configuration's seed 3 in the same file says nothing about this one's
        "runs/syntactic_attention/other_config/seed3": {"jump_row_from_walk": 1.0}}}]
    diagnoses = failure_modes.kept_diagnoses(results, swaps, "addprim_jump")
    assert {seed: d["mode"] for seed, d in diagnoses.items()} == {
        "seed0": "solved", "seed1": "jump_row", "seed2": "unknown", "seed3": "unknown"}
    assert diagnoses["seed1"]["evidence"] == \
        "swap file: 99.0% of 500 test commands with walk's row"
    assert diagnoses["seed3"]["evidence"] == "no swap kept; bare verbs not kept"
    assert diagnoses["seed2"]["evidence"] == \
        "swap file: 0.0% with walk's row; bare verbs not kept"
    summary = failure_modes.summarize(diagnoses)
    assert summary["counts"] == {"one_word_boundary": 0, "solved": 1, "jump_row": 1,
                                 "other": 0, "unknown": 2}
    assert summary["shares"]["unknown"] == 0.5


@pytest.mark.parametrize("args, message", [
    (["--results", "r.json", "--swaps", "s.json"], "--swaps goes with --results and --swap-folder"),
    (["--results", "r.json", "--runs", "seed0"], "give either --runs or --results"),
    ([], "give either --runs or --results"),
])
def test_kept_and_trained_runs_are_asked_for_apart(args, message):
    refused = tool(*args)
    assert refused.returncode == 2
    assert message in refused.stderr


def test_add_to_refuses_a_run_already_in_the_file(tmp_path):
    run = tmp_path / "seed0"
    run.mkdir()
    (run / "config.json").write_text("{}")
    earlier = tmp_path / "modes.json"
    earlier.write_text(json.dumps({"sample": 1000, "sample_seed": 0,
                                   "diagnoses": {str(run): {"mode": "solved"}}}))
    refused = tool("--runs", run, "--add-to", earlier)
    assert refused.returncode == 2
    assert f"--add-to: already in the file: {run}" in refused.stderr


def test_diagnoses_added_to_a_file_are_summarized_with_its_own(tmp_path):
    run = tmp_path / "seed1"
    earlier = {"sample": 4, "sample_seed": 0, "command": "python first",
               "diagnoses": {"runs/seed0": {"mode": "solved"}}, "summary": {"n": 1}}
    diagnoses = {str(run): {"mode": "jump_row", "sample_accuracy": 0.4,
                            "sample_accuracy_with_walk_row": 1.0}}
    record = failure_modes.added_record(earlier, diagnoses, {"sample": 4, "sample_seed": 0},
                                        "python second", {"commit": "abc"})
    assert record["summary"]["counts"] == {"one_word_boundary": 0, "solved": 1, "jump_row": 1,
                                           "other": 0}
    assert record["command"] == "python first"
    assert record["additions"][0]["runs"] == [str(run)]
    assert earlier["summary"] == {"n": 1}  # the earlier record is unchanged
    with pytest.raises(ValueError, match="the file was written with sample=4"):
        failure_modes.added_record(earlier, diagnoses, {"sample": 5, "sample_seed": 0}, "", {})
