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


def _translation_run(run_dir: Path, rows, limit=6):
    """A translation run directory with the files `tools/mt_output_lengths.py` reads."""
    import json

    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps(
        {"model": "seq2seq", "model_args": {"max_output_length": limit}}))
    (run_dir / "metrics.json").write_text(json.dumps(
        {"accuracy": {"test": 0.5}, "bleu": {"test": {"bleu": 1.0, "bleu_authors": 2.0}}}))
    (run_dir / "errors_test.jsonl").write_text("".join(
        json.dumps({"predicted": p, "expected": e}) + "\n" for p, e in rows))


def test_mt_output_lengths_counts_run_on_outputs_and_keeps_earlier_runs(tmp_path, capsys):
    import json

    import importlib.util

    spec = importlib.util.spec_from_file_location("mt_output_lengths",
                                                  ROOT / "tools" / "mt_output_lengths.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    _translation_run(tmp_path / "a", [("a b c d e f", "a b"), ("a", "a b c"), ("x y", "a b")])
    _translation_run(tmp_path / "b", [("a b", "a b c d")])
    out = tmp_path / "out.json"
    assert tool.main(["--run", str(tmp_path / "a"), "--out", str(out)]) == 0
    first = json.loads(out.read_text())["per_run"][0]
    assert (first["wrong_translations"], first["longer_than_reference"],
            first["shorter_than_reference"], first["as_long_as_reference"],
            first["at_least_twice_as_long"], first["at_the_output_limit"],
            first["tokens_emitted"], first["tokens_in_references"]) == (3, 1, 1, 1, 1, 1, 9, 7)
    # A later seed added: the first run's counts stay (its directory may be gone).
    (tmp_path / "a" / "errors_test.jsonl").unlink()
    assert tool.main(["--run", str(tmp_path / "b"), "--out", str(out), "--keep-earlier"]) == 0
    report = json.loads(out.read_text())
    assert [run["run"] for run in report["per_run"]] == [str(tmp_path / "a"),
                                                         str(tmp_path / "b")]
    assert report["per_run"][0] == first
    assert report["earlier_commands"] == [f"python tools/mt_output_lengths.py --run "
                                          f"{tmp_path / 'a'}"]


def test_mt_target_entropy_is_the_source_blind_cross_entropy_of_the_fit_targets(monkeypatch):
    import importlib.util
    import math

    import tfds_scan

    spec = importlib.util.spec_from_file_location("mt_target_entropy",
                                                  ROOT / "tools" / "mt_target_entropy.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    asked = []

    def pairs(split, part, **carve):
        asked.append((split, part, carve))
        return [("x", "a b"), ("y", "a")]

    monkeypatch.setattr(tfds_scan, "load_pairs", pairs)
    counts = tool.target_entropies("mt_eng_fra_daxy")
    assert asked == [("mt_eng_fra_daxy", "fit",
                      {"validation_fraction": 0.2, "validation_seed": 0})]
    # Tokens a b <eos> a <eos>: a 2/5, b 1/5, <eos> 2/5.
    assert counts["target_tokens"] == 5
    assert math.isclose(counts["unigram_entropy_nats"],
                        -(2 * 0.4 * math.log(0.4) + 0.2 * math.log(0.2)))
    # After <sos> always a; after a: b or <eos> (1/2 each); after b always <eos>.
    assert math.isclose(counts["bigram_conditional_entropy_nats"], 2 / 5 * math.log(2))


def test_accuracy_by_output_length_groups_the_test_commands_by_expected_length(tmp_path, capsys):
    import importlib.util
    import json

    import tfds_scan

    spec = importlib.util.spec_from_file_location(
        "accuracy_by_output_length", ROOT / "tools" / "accuracy_by_output_length.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    # A hand-made split: two commands of 2 actions, one of 4; the run gets one of each wrong,
    # stopping at 1 action and running on to 5.
    test = [("a", "X Y"), ("b", "X Z"), ("c", "X X X X")]
    rows = [{"command": "b", "expected": "X Z", "predicted": "X"},
            {"command": "c", "expected": "X X X X", "predicted": "X X X X X"}]
    result = tool.by_length(test, rows, longest_train=3)
    assert result["exact_match_by_length"] == {"2": {"commands": 2, "exact_match": 0.5},
                                               "4": {"commands": 1, "exact_match": 0.0}}
    assert result["exact_match"] == round(1 / 3, 4)
    assert result["wrong_predicted_lengths"] == {"median": 3.0, "largest": 5,
                                                 "share_at_most_longest_train": 0.5}
    # A row that is not a test command of the split is refused, naming it.
    try:
        tool.by_length(test, [{"command": "z", "expected": "X", "predicted": ""}], 3)
    except ValueError as error:
        assert "'z'" in str(error)
    else:
        raise AssertionError("a foreign row was accepted")
    # Through the command line on a real split: a run whose one error is the first command.
    first_command, first_actions = tfds_scan.split_examples("length")["test"][0]
    run = tmp_path / "run"
    run.mkdir()
    (run / "errors_test.jsonl").write_text(json.dumps(
        {"command": first_command, "expected": first_actions, "predicted": ""}) + "\n")
    out = tmp_path / "by_length.json"
    assert tool.main(["--split", "length", "--runs", str(run), "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["longest_train_output"] == 22 and written["provenance"]["kind"] == "check"
    size = str(len(first_actions.split()))
    assert written["per_run"][0]["exact_match_by_length"][size]["exact_match"] < 1.0
    assert tool.main(["--split", "length", "--runs", str(tmp_path / "none")]) == 2
    assert "does not exist" in capsys.readouterr().err


def _load_tool(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_accuracy_by_unseen_clause_groups_the_test_commands_by_what_training_never_held(
        tmp_path, capsys):
    import json
    import re

    import tfds_scan

    from compgen_tf.analysis.unseen_clauses import by_unseen_clause, clause_shape

    assert clause_shape("jump opposite left twice") == "V opposite D twice"
    assert clause_shape("turn around right") == "turn around D"
    # A hand-made split: `jump left` and `walk opposite right` are unseen; the run gets wrong
    # one of the two commands holding `jump left` and the one made of seen clauses.
    train = ["jump", "walk left", "walk opposite left twice", "jump and walk left"]
    test = ["jump left", "jump left after walk opposite right", "walk left after jump"]
    rows = [{"command": "jump left after walk opposite right"},
            {"command": "walk left after jump"}]
    result = by_unseen_clause(train, test, rows)
    assert result["exact_match"] == round(1 / 3, 4)
    assert result["all_clauses_seen"] == {"commands": 1, "exact_match": 0.0}
    assert result["by_clause"] == {"jump left": {"commands": 2, "exact_match": 0.5},
                                   "walk opposite right": {"commands": 1, "exact_match": 0.0}}
    assert result["by_shape"] == {"V D": {"commands": 2, "exact_match": 0.5},
                                  "V opposite D": {"commands": 1, "exact_match": 0.0}}
    with pytest.raises(ValueError, match="'run'"):
        by_unseen_clause(train, test, [{"command": "run"}])
    # Through the command line on MCD3, whose training file has no bare `V opposite D`.
    tool = _load_tool("accuracy_by_unseen_clause")
    test_pairs = tfds_scan.split_examples("scan_mcd3")["test"]
    bare_opposite = [c for c, _ in test_pairs if any(
        re.fullmatch(r"(walk|look|run|jump) opposite (left|right)", clause)
        for clause in re.split(r" and | after ", c))]
    run = tmp_path / "run"
    run.mkdir()
    (run / "errors_test.jsonl").write_text(json.dumps(
        {"command": bare_opposite[0], "expected": "", "predicted": ""}) + "\n")
    out = tmp_path / "by_clause.json"
    assert tool.main(["--split", "scan_mcd3", "--runs", str(run), "--out", str(out)]) == 0
    written = json.loads(out.read_text())
    assert written["unseen_shapes"]["V opposite D"] == len(bare_opposite) > 0
    assert written["provenance"]["kind"] == "post-hoc"
    shape = written["per_run"][0]["by_shape"]["V opposite D"]
    assert shape == {"commands": len(bare_opposite),
                     "exact_match": round(1 - 1 / len(bare_opposite), 4)}
    assert written["per_run"][0]["exact_match"] == round(1 - 1 / len(test_pairs), 4)
    capsys.readouterr()
    assert tool.main(["--split", "scan_mcd3", "--runs", str(tmp_path / "none")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert tool.main(["--split", "no_such_split", "--runs", str(run)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    # A later seed added with --keep-earlier: the first run's figures stay though its
    # directory is gone, and the command that made them is kept.
    later = tmp_path / "later"
    later.mkdir()
    (later / "errors_test.jsonl").write_text("")
    first_run, first_command = written["per_run"][0], written["command"]
    (run / "errors_test.jsonl").unlink()
    assert tool.main(["--split", "scan_mcd3", "--runs", str(later), "--out", str(out),
                      "--keep-earlier"]) == 0
    both = json.loads(out.read_text())
    assert both["per_run"][0] == first_run and both["earlier_commands"] == [first_command]
    assert both["per_run"][1]["run"] == str(later) and both["per_run"][1]["exact_match"] == 1.0
    # Another split's file is not merged into: one line, exit 2 (argparse's).
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        tool.main(["--split", "scan_mcd2", "--runs", str(later), "--out", str(out),
                   "--keep-earlier"])
    assert refused.value.code == 2
    assert "is of split 'scan_mcd3', not 'scan_mcd2'" in capsys.readouterr().err


def test_length_errors_by_clause_order_says_a_dev_split_from_an_official_one(tmp_path):
    import json

    import tfds_scan

    tool = _load_tool("length_errors_by_clause_order")
    for split, kind in (("length_dev", "validation"), ("length", "post-hoc")):
        command, actions = tfds_scan.split_examples(split)["test"][0]
        run = tmp_path / split
        run.mkdir()
        (run / "errors_test.jsonl").write_text(json.dumps(
            {"command": command, "expected": actions, "predicted": ""}) + "\n")
        out = tmp_path / f"{split}.json"
        assert tool.main(["--split", split, "--runs", str(run), "--out", str(out)]) == 0
        written = json.loads(out.read_text())
        assert written["provenance"]["kind"] == kind
        by_class = written["per_run"][0]["by_class"]
        assert sum(row["wrong"] for row in by_class.values()) == 1
        assert set(by_class) <= set(written["classes"])


def test_replaced_runs_keeps_the_earlier_run_of_each_seed_trained_again(tmp_path):
    import json

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                       cwd=tmp_path, check=True, capture_output=True)

    def results(runs):
        return json.dumps({"model": "m", "runs": runs})

    first = [{"seed": 0, "test_bleu": 19.38, "commit": "a", "loss_curve": [[1, 2.0]],
              "validation_bleu_curve": [[10, 14.26]]},
             {"seed": 1, "test_bleu": 23.29, "commit": "a"},
             {"seed": 2, "test_bleu": 6.39, "commit": "a"}]
    path = tmp_path / "results" / "m.json"
    path.parent.mkdir()

    def commit(runs, message):
        path.write_text(results(runs))
        git("add", ".")
        git("commit", "-q", "-m", message)

    git("init", "-q")
    commit(first, "first runs")
    out = tmp_path / "replaced.json"

    def tool(revision):
        ran = subprocess.run([sys.executable, str(ROOT / "tools" / "replaced_runs.py"),
                              "--results", str(path), "--commit", revision, "--out", str(out),
                              "--why", "scored with a fault"], capture_output=True, text=True,
                             timeout=120, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        return [(run["seed"], run["test_bleu"]) for run in json.loads(out.read_text())["replaced"]]

    # Seeds 0 and 1 trained again; seed 2 only scored again (the same training).
    commit([{"seed": 0, "test_bleu": 22.59, "commit": "b"},
            {"seed": 1, "test_bleu": 23.87, "commit": "b"},
            dict(first[2], test_bleu=20.15)], "trained again")
    assert tool("HEAD~1") == [(0, 19.38), (1, 23.29)]
    replaced = json.loads(out.read_text())["replaced"]
    # The quoted curves are kept, the long loss curve is not.
    assert replaced[0]["validation_bleu_curve"] == [[10, 14.26]]
    assert "loss_curve" not in replaced[0] and replaced[0]["why"] == "scored with a fault"
    # Seed 0 trained a third time: both of its earlier trainings stay.
    path.write_text(results([{"seed": 0, "test_bleu": 24.0, "commit": "c"},
                             {"seed": 1, "test_bleu": 23.87, "commit": "b"}]))
    assert tool("HEAD") == [(0, 19.38), (0, 22.59), (1, 23.29)]
    missing = subprocess.run([sys.executable, str(ROOT / "tools" / "replaced_runs.py"),
                              "--results", str(tmp_path / "none.json"), "--commit", "HEAD",
                              "--out", str(out)], capture_output=True, text=True, timeout=120)
    assert missing.returncode == 2 and missing.stderr.strip().count("\n") == 0
