"""Stale results: the recorded numerics changes, asked per seed (experiments.staleness)."""

import json
import subprocess

import pytest

from compgen_tf import registry
from compgen_tf.experiments import staleness
from compgen_tf.experiments.kinds import experiment_for
from compgen_tf.experiments.staleness import (NumericsChange, code_state, load_changes,
                                              results_state)
from compgen_tf.versions import checkout_root


def _git(repo, *args):
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """A repository of three commits, the second of them a numerics change of `seq2seq`
    (and of `seq2seq` with a length head only), and a branch that never had it."""
    repo = tmp_path_factory.mktemp("repo")
    _git(repo, "init", "-q", "-b", "main")
    commits = {}
    for name in ("before", "change", "after"):
        (repo / "file.txt").write_text(name)
        _git(repo, "add", "file.txt")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", name)
        commits[name] = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "-b", "side", commits["before"])
    (repo / "other.txt").write_text("side")
    _git(repo, "add", "other.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "side")
    commits["side"] = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "main")
    changes = (NumericsChange(commits["change"], "2026-11-30", ("seq2seq",), None, "draws"),
               NumericsChange(commits["change"], "2026-11-30", ("meta_seq2seq",),
                              ("length_head",), "head draws"))
    return repo, commits, changes


def test_a_seed_before_a_change_is_changed_one_after_it_current(history):
    repo, commits, changes = history
    state = code_state("seq2seq", None, commits["before"], repo, changes)
    assert state.state == "changed" and state.changes == changes[:1]
    assert commits["change"][:7] in state.reason
    assert code_state("seq2seq", None, commits["change"], repo, changes).state == "current"
    assert code_state("seq2seq", None, commits["after"], repo, changes).state == "current"
    # A branch that never merged the change ran without it, as its fork point did.
    assert code_state("seq2seq", None, commits["side"], repo, changes).state == "changed"
    # A run of a checkout with uncommitted edits counts as a run of its commit.
    edited = code_state("seq2seq", None, commits["after"] + "+changes", repo, changes)
    assert edited.state == "current" and edited.commit == commits["after"]
    # Another model is not affected.
    assert code_state("stack_lstm", None, commits["before"], repo, changes).state == "current"


def test_a_change_of_some_configurations_marks_those_only(history):
    repo, commits, changes = history
    before = commits["before"]
    with_head = {"model_args": {"hidden_units": 8, "length_head": {"state_size": 3}}}
    without = {"model_args": {"hidden_units": 8}}
    assert code_state("meta_seq2seq", with_head, before, repo, changes).state == "changed"
    assert code_state("meta_seq2seq", without, before, repo, changes).state == "current"
    assert code_state("meta_seq2seq", {"model_args": {"length_head": None}}, before, repo,
                      changes).state == "current"
    # No recorded configuration: it may be one of them.
    assert code_state("meta_seq2seq", None, before, repo, changes).state == "changed"


def test_what_cannot_be_asked_is_unknown(history, tmp_path):
    repo, commits, changes = history
    assert code_state("seq2seq", None, None, repo, changes).state == "unknown"
    missing = code_state("seq2seq", None, "f" * 40, repo, changes)
    assert missing.state == "unknown" and "does not have commit ffffffffffff" in missing.reason
    # Not a git checkout at all (a package installed from a wheel has none to ask).
    outside = code_state("seq2seq", None, commits["before"], tmp_path, changes)
    assert outside.state == "unknown"


def test_a_results_file_is_changed_when_any_seed_is_and_lists_them(history):
    repo, commits, changes = history
    document = {"model": "seq2seq", "versions": {"commit": commits["after"]}, "runs": [
        {"seed": 2, "commit": commits["after"]}, {"seed": 0, "commit": commits["before"]},
        {"seed": 1}]}  # seed 1 recorded no commit: the file's own is used
    state = results_state(document, repo, changes)
    assert state.state == "changed"
    assert list(state.seeds) == [0, 1, 2]
    assert state.seeds_in("changed") == [0] and state.seeds_in("current") == [1, 2]
    assert state.changes == changes[:1]
    document["runs"] = [{"seed": 0, "commit": commits["after"]}, {"seed": 1}]
    del document["versions"]["commit"]
    assert results_state(document, repo, changes).state == "unknown"
    document["runs"] = [{"seed": 0, "commit": commits["after"]}]
    assert results_state(document, repo, changes).state == "current"


def test_a_fixed_scoring_fault_marks_the_runs_on_its_splits_that_had_the_fault(history):
    # The fault came in at "change" and is fixed at "after": a run at "change" on one of its
    # splits was scored with it; one before it, one on another split, one after the fix, not.
    repo, commits, _ = history
    fix = NumericsChange(commits["after"], "2026-12-07", ("seq2seq",), None, "scoring fault",
                         splits=("mt_eng_fra",), introduced=commits["change"])
    state = code_state("seq2seq", None, commits["change"], repo, [fix], split="mt_eng_fra")
    assert state.state == "changed" and state.changes == (fix,)
    assert code_state("seq2seq", None, commits["before"], repo, [fix],
                      split="mt_eng_fra").state == "current"
    assert code_state("seq2seq", None, commits["change"], repo, [fix],
                      split="simple").state == "current"
    assert code_state("seq2seq", None, commits["after"], repo, [fix],
                      split="mt_eng_fra").state == "current"
    # A split not recorded may be one of them; a fault's commit git lacks cannot be asked.
    assert code_state("seq2seq", None, commits["change"], repo, [fix]).state == "changed"
    lost = NumericsChange(commits["after"], "2026-12-07", ("seq2seq",), None, "fault",
                          splits=("mt_eng_fra",), introduced="e" * 40)
    unknown = code_state("seq2seq", None, commits["change"], repo, [lost], split="mt_eng_fra")
    assert unknown.state == "unknown" and "does not have commit eeeeeeeeeeee" in unknown.reason
    # A results file's seeds are asked with its split.
    document = {"model": "seq2seq", "split": "mt_eng_fra", "versions": {},
                "runs": [{"seed": 0, "commit": commits["change"]},
                         {"seed": 1, "commit": commits["before"]}]}
    assert results_state(document, repo, [fix]).seeds_in("changed") == [0]
    document["split"] = "simple"
    assert results_state(document, repo, [fix]).state == "current"


def test_the_recorded_list_is_well_formed_and_names_registered_models():
    changes = load_changes()
    assert changes, "the package ships its list"
    for change in changes:
        assert set(change.models) <= set(registry.MODELS), change
        for model in change.models:
            spec = registry.spec(model)
            names = experiment_for(spec).model_arg_names(model, spec.tasks[0])
            assert set(change.configs or ()) <= names, (change.configs, model)


def test_a_malformed_entry_is_refused_with_its_place(tmp_path):
    entry = {"commit": "6171d2b", "date": "2026-11-30", "models": ["seq2seq"], "what": "x"}
    path = tmp_path / "changes.json"
    path.write_text(json.dumps([entry]))
    with pytest.raises(ValueError, match="entry 0: 'commit' must be a full 40-digit hash"):
        load_changes(path)
    path.write_text(json.dumps([{**entry, "commit": "a" * 40, "date": "30 Nov"}]))
    with pytest.raises(ValueError, match="'date' must be an ISO date"):
        load_changes(path)
    path.write_text(json.dumps([{**entry, "commit": "a" * 40, "model": ["seq2seq"]}]))
    with pytest.raises(ValueError, match=r"unknown keys \['model'\]"):
        load_changes(path)
    path.write_text(json.dumps([{**entry, "commit": "a" * 40, "splits": []}]))
    with pytest.raises(ValueError, match="'splits' must be a non-empty list of split names"):
        load_changes(path)
    path.write_text(json.dumps([{**entry, "commit": "a" * 40, "introduced": "0001116"}]))
    with pytest.raises(ValueError, match="'introduced' must be a full 40-digit hash"):
        load_changes(path)


# Commits of this repository's history (git log): f9aea6d (2026-11-28) trained Syntactic
# Attention seeds before the independent initial draws of 6171d2b (2026-11-30); cfa7de9
# (2026-12-01) came after it.
_BEFORE, _AFTER = ("f9aea6d2a3a8bedf624c192482e4ed109f23d663",
                   "cfa7de942950f162bfe64644148f206948516ae0")
# 59ec1ee (2026-12-02) scored Syntactic Attention's paper-regime MT seed 0.
_MT_SCORED = "59ec1eefec1589f5d70e61557abae8b16929238a"


def test_the_independent_draws_mark_seeds_trained_before_them():
    root = checkout_root()
    if root is None or any(subprocess.run(["git", "-C", str(root), "cat-file", "-e", commit],
                                          capture_output=True).returncode
                           for commit in (_BEFORE, _AFTER, _MT_SCORED)):
        pytest.skip("needs this repository's history (a full clone)")
    staleness._is_ancestor.cache_clear()
    before = code_state("syntactic_attention", None, _BEFORE)
    assert before.state == "changed"
    assert "6171d2b5d45edff53f1555780020e9be9171f0d7" in [c.commit for c in before.changes]
    assert code_state("syntactic_attention", None, _AFTER, split="addprim_jump").state == \
        "current"
    # The baseline without a length head was not re-drawn; with one it was.
    assert code_state("seq2seq", {"model_args": {}}, _AFTER, split="simple").state == "current"
    changed = code_state("seq2seq", {"model_args": {"length_head": {"state_size": 3}}},
                         "80b2809ca4c35d2e85a9467a2d20c8643be862ac")
    assert "6171d2b5d45edff53f1555780020e9be9171f0d7" in [c.commit for c in changed.changes]
    # The translation seeds scored between 0001116 and c7bf59b (2026-12-01 to 12-07) had the
    # empty-source fault in their test scores; the same commit's SCAN seeds did not.
    fault = "c7bf59b4ccbcc4f4a3181d1f90206386a65992f5"
    assert fault in [c.commit for c in code_state("syntactic_attention", None, _MT_SCORED,
                                                  split="mt_eng_fra_daxy").changes]
    assert fault not in [c.commit for c in code_state("syntactic_attention", None, _MT_SCORED,
                                                      split="addprim_jump").changes]


def _results_file(results_dir, relative, model, runs):
    path = results_dir / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "model": model, "split": "addprim_jump", "command": "python -m compgen_tf reproduce",
        "versions": {}, "provenance": {"kind": "faithful", "reason": "test"}, "runs": runs,
        "summary": {"n": len(runs)}}))


def test_the_tool_lists_marked_files_with_their_seeds_wall_times(tmp_path, capsys):
    """tools/check_stale_results.py --list on a results directory of its own: the seed
    trained before the independent draws marks its file, one after them does not, one
    without a commit is unknown; a re-run set's file is listed with its set."""
    import os
    import runpy
    import sys
    from pathlib import Path

    root = checkout_root()
    if root is None or subprocess.run(["git", "-C", str(root), "cat-file", "-e", _BEFORE],
                                      capture_output=True).returncode:
        pytest.skip("needs this repository's history (a full clone)")
    results = tmp_path / "results"
    run = {"val_accuracy": 1.0, "test_accuracy": 0.5, "steps": 10}
    _results_file(results, "syntactic_attention/old.json", "syntactic_attention", [
        {**run, "seed": 3, "commit": _AFTER, "wall_time_s": 60.0},
        {**run, "seed": 1, "commit": _BEFORE, "wall_time_s": 120.0}])
    _results_file(results, "syntactic_attention/new.json", "syntactic_attention",
                  [{**run, "seed": 0, "commit": _AFTER, "wall_time_s": 60.0}])
    _results_file(results, "core_0.2.0/stack_lstm/palindromes.json", "stack_lstm",
                  [{**run, "seed": 0, "wall_time_s": 30.0}])
    (results / "checks").mkdir()
    (results / "checks" / "something.json").write_text("{}")  # not a results file
    out = tmp_path / "stale.json"
    tool = Path(__file__).resolve().parents[1] / "tools" / "check_stale_results.py"
    # In this process (TensorFlow is imported already); the refusal below runs it whole.
    main = runpy.run_path(str(tool), run_name="check_stale_results")["main"]
    assert main(["--list", "--results-dir", str(results), "--out", str(out)]) == 0
    assert "2 files marked" in capsys.readouterr().out
    listing = json.loads(out.read_text())
    assert listing["provenance"]["kind"] == "check"
    files = {entry["path"]: entry for entry in listing["files"]}
    assert set(files) == {"syntactic_attention/old.json", "core_0.2.0/stack_lstm/palindromes.json"}
    old = files["syntactic_attention/old.json"]
    assert old["state"] == "changed" and old["changed_seeds"] == [1]
    assert [s["seed"] for s in old["seeds"]] == [1, 3]
    assert old["check_seed"] == 1 and old["check_wall_time_s"] == 120.0
    assert "6171d2b5d45edff53f1555780020e9be9171f0d7" in [c["commit"] for c in old["changes"]]
    assert files["core_0.2.0/stack_lstm/palindromes.json"]["state"] == "unknown"

    from compgen_tf.analysis.stale_results import check_file_name, checks_within

    assert check_file_name(old) == "stale_check_syntactic_attention_old_seed1.json"
    assert check_file_name(files["core_0.2.0/stack_lstm/palindromes.json"]) == \
        "stale_check_core_0.2.0_stack_lstm_palindromes_seed0.json"
    chosen, left = checks_within(listing["files"], max_minutes=1.0)
    assert [e["path"] for e in chosen] == ["core_0.2.0/stack_lstm/palindromes.json"]
    assert [e["path"] for e in left] == ["syntactic_attention/old.json"]
    # --run without a budget is refused before anything is read: exit code 2.
    env = dict(os.environ, PYTHONPATH=str(root), TF_CPP_MIN_LOG_LEVEL="2")
    refused = subprocess.run([sys.executable, str(tool), "--run", "--results-dir",
                              str(results)], capture_output=True, text=True, env=env,
                             timeout=300)
    assert refused.returncode == 2 and "--max-minutes" in refused.stderr
