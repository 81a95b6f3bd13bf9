"""Exact match by category and error kinds by category, on hand-made examples."""

import pytest

from compgen_tf.reporting.error_analysis import classify_errors, summary_lines
from compgen_tf.training.categories import category_scores, counts_by_category
from tfds_scan import cogs


def test_category_scores_overall_per_category_and_cogs_groups():
    # Six gen lines: two structural categories, two lexical ones.
    categories = ["pp_recursion", "pp_recursion", "cp_recursion", "subj_to_obj_common",
                  "subj_to_obj_common", "prim_to_obj_proper"]
    correct = [True, False, False, True, True, False]
    scores = category_scores(correct, categories, cogs.category_group)
    assert scores["overall"] == {"correct": 3, "total": 6, "accuracy": 0.5}
    assert scores["categories"] == {
        "cp_recursion": {"correct": 0, "total": 1, "accuracy": 0.0},
        "pp_recursion": {"correct": 1, "total": 2, "accuracy": 0.5},
        "prim_to_obj_proper": {"correct": 0, "total": 1, "accuracy": 0.0},
        "subj_to_obj_common": {"correct": 2, "total": 2, "accuracy": 1.0},
    }
    # A group pools its lines: lexical 2 of 3, structural 1 of 3.
    assert scores["groups"] == {
        "lexical": {"correct": 2, "total": 3, "accuracy": 2 / 3},
        "structural": {"correct": 1, "total": 3, "accuracy": 1 / 3},
    }
    assert "groups" not in category_scores(correct, categories)
    with pytest.raises(ValueError, match="6 outcomes but 2 categories"):
        category_scores(correct, categories[:2])


def test_error_kinds_are_counted_per_category():
    records = [
        {"command": "a", "expected": "x y z", "predicted": "x y", "category": "pp_recursion"},
        {"command": "b", "expected": "x y", "predicted": "x y z", "category": "pp_recursion"},
        {"command": "c", "expected": "x y", "predicted": "x q", "category": "cp_recursion"},
        {"command": "d", "expected": "x y", "predicted": "y x", "category": "pp_recursion"},
    ]
    analysis = classify_errors(records)
    assert analysis["kinds"] == {"stops_early": 1, "runs_over": 1, "missing_action": 1,
                                 "other": 1}
    assert analysis["kinds_by_category"] == {
        "cp_recursion": {"stops_early": 0, "runs_over": 0, "missing_action": 1, "other": 0},
        "pp_recursion": {"stops_early": 1, "runs_over": 1, "missing_action": 0, "other": 1},
    }
    lines = summary_lines(analysis, "gen")
    assert lines[-3:] == ["  by category: stops_early / runs_over / missing_action / other",
                          f"    {'cp_recursion':<55}      0      0      1      0",
                          f"    {'pp_recursion':<55}      1      1      0      1"]
    # The most frequent never-emitted tokens first, at most SHOWN_MISSING of them.
    many = [{"command": "c", "expected": " ".join(f"t{i}" for i in range(12)) + " z9",
             "predicted": "zzz"}, {"command": "d", "expected": "z9", "predicted": "zzz"}]
    (never,) = [line for line in summary_lines(classify_errors(many), "gen")
                if "never emitted" in line]
    assert never.startswith("  never emitted: z9 (2), t0 (1), t1 (1)")
    assert never.endswith(", and 3 more (error_kinds_<split>.json lists them)")
    # Records without categories (SCAN) keep the old analysis.
    assert "kinds_by_category" not in classify_errors(
        [{k: v for k, v in r.items() if k != "category"} for r in records])
    assert counts_by_category(records, lambda r: r["command"] < "c") == {
        "cp_recursion": {False: 1}, "pp_recursion": {True: 2, False: 1}}


def _cogs_runs():
    """Two seeds of a COGS results file: gen scored by category and group."""
    by_seed = [({"pp_recursion": 0.25, "subj_to_obj_common": 0.75}, 0.5),
               ({"pp_recursion": 0.5, "subj_to_obj_common": 1.0}, 0.75)]
    return [{"seed": seed, "val_accuracy": 0.95, "test_accuracy": 0.96, "wall_time_s": 60.0,
             "steps": 100, "best_step": 50,
             "accuracy_by_category": {"gen": {
                 "overall": overall, "categories": categories,
                 "groups": {"lexical": categories["subj_to_obj_common"],
                            "structural": categories["pp_recursion"]}}}}
            for seed, (categories, overall) in enumerate(by_seed)]


def test_the_report_tabulates_categories_and_the_figures_check_backs_them(tmp_path):
    from compgen_tf.cli.report import main as report
    from compgen_tf.experiments.results import category_accuracies, write_results

    scores = category_scores([True, False], ["pp_recursion", "cp_recursion"],
                             cogs.category_group)
    assert category_accuracies({"gen": scores}) == {"gen": {
        "overall": 0.5, "categories": {"cp_recursion": 0.0, "pp_recursion": 1.0},
        "groups": {"structural": 0.5}}}
    results = tmp_path / "results"
    write_results("seq2seq", "cogs", "cmd", _cogs_runs(), {"keras": "3"}, results_dir=results,
                  provenance={"kind": "post-hoc", "reason": "a test"})
    readme, page = tmp_path / "README.md", tmp_path / "docs" / "research" / "benchmarks.md"
    readme.write_text("# P\n\n<!-- results-summary:start -->\n<!-- results-summary:end -->\n")
    page.parent.mkdir(parents=True)
    page.write_text("# Benchmarks\n\n<!-- category-table: seq2seq/cogs -->\nold\n"
                    "<!-- category-table:end -->\n")
    arguments = ["--results-dir", str(results), "--runs-dir", str(tmp_path / "runs"),
                 "--readme", str(readme)]
    assert report(arguments) == 0
    expected = [
        "| gen exact match (%) | [seq2seq / cogs](../../results/seq2seq/cogs.json) (n=2) |",
        "|---|---|",
        "| **all** | 62.5 ± 17.7 |",
        "| **lexical** | 87.5 ± 17.7 |",
        "| **structural** | 37.5 ± 17.7 |",
        "| pp_recursion | 37.5 ± 17.7 |",
        "| subj_to_obj_common | 87.5 ± 17.7 |",
    ]
    assert page.read_text().splitlines()[3:10] == expected
    results_readme = (results / "README.md").read_text()
    assert "## By category" in results_readme
    assert "| **structural** | 37.5 ± 17.7 |" in results_readme
    # Every figure of the page and of the results README is backed by the results file.
    assert report([*arguments, "--check"]) == 0
