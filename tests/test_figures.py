"""Typed figures are checked against the results file their own text cites
(`compgen_tf.reporting.figures`, run by `python -m compgen_tf report --check`)."""

import json
from pathlib import Path

from compgen_tf.reporting.figures import (check_documents, documents, file_values,
                                          shown_forms, unbacked_figures)

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO / "results"
PLANTED = REPO / "tests" / "fixtures" / "planted_wrong_figure.md"


def _results_file(repo: Path, relative: str, test_scores, **more) -> Path:
    path = repo / "results" / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    runs = [{"seed": seed, "test_accuracy": score, **{key: values[seed]
                                                      for key, values in more.items()}}
            for seed, score in enumerate(test_scores)]
    path.write_text(json.dumps({"runs": runs}))
    return path


def _repo(tmp_path: Path) -> Path:
    """A repository with two results files: a.json (36.35% and 5%) and b.json (12.5%)."""
    _results_file(tmp_path, "m/a.json", [0.3634830002, 0.05], test_bleu=[7.1, 8.2])
    _results_file(tmp_path, "m/b.json", [0.125])
    return tmp_path


def _problems(repo: Path, text: str) -> list[str]:
    document = repo / "docs" / "page.md"
    document.parent.mkdir(exist_ok=True)
    return unbacked_figures(text, document, repo)


def _figures_of(problems: list[str]) -> list[str]:
    return [problem.split(" is in ")[0].split(" cites ")[0] for problem in problems]


def test_the_planted_wrong_figure_passed_the_old_check_and_fails_this_one():
    # The old check accepted a figure that any committed file holds: 53.5 is the median of
    # add-jump `default.json`, so it passed beside a link to seq2seq's simple split.
    every_value = [value for path in sorted(RESULTS_DIR.rglob("*.json"))
                   for value in file_values(path)]
    assert "53.5" in shown_forms(every_value)
    assert "53.5" not in shown_forms(file_values(RESULTS_DIR / "seq2seq" / "simple.json"))
    problems = check_documents([PLANTED], RESULTS_DIR)
    # Named by document, line and figure; the sentence's right figure (99.8%) passes.
    assert [problem.split(" in \"")[0] for problem in problems] == [
        "tests/fixtures/planted_wrong_figure.md:4: 53.5% is in none of "
        "results/seq2seq/simple.json (its sentence)"]


def test_the_repositorys_documents_pass():
    pages = documents(REPO)
    assert {REPO / "README.md", REPO / "results" / "README.md", REPO / "serving" / "README.md",
            REPO / "docs" / "research" / "length_generalization.md"} <= set(pages)
    problems = check_documents(pages, RESULTS_DIR)
    assert problems == [], "\n".join(problems)


def test_a_figure_is_checked_against_the_file_of_its_own_sentence(tmp_path):
    repo = _repo(tmp_path)
    # A link relative to the document and a typed path relative to the repository.
    assert _problems(repo, "Seed 0 scores 36.3% and 36.35% ([a](../results/m/a.json)).") == []
    assert _problems(repo, "Seed 1 scores 5% (results/m/a.json). B: 12.5% (results/m/b.json).\n"
                     ) == []
    # 12.5% is in b.json, not in the a.json its sentence cites.
    assert _problems(repo, "Intro.\nSeed 0 scores 12.5% here ([a](../results/m/a.json)).") == [
        'line 2: 12.5% is in none of results/m/a.json (its sentence) in '
        '"Seed 0 scores 12.5%"']
    # Each member of a list that ends in %.
    assert _figures_of(_problems(repo, "Seeds 0 / 1: 36.3 / 12.5% (results/m/a.json).")) == [
        "line 1: 12.5%"]
    assert _figures_of(_problems(repo, "Seeds 0 / 1: 12.5 / 5% (results/m/a.json).")) == [
        "line 1: 12.5%"]
    # Rounded by hand: 36.35 typed as 36.4.
    assert _figures_of(_problems(repo, "Seed 0: 36.4% (results/m/a.json).")) == ["line 1: 36.4%"]


def test_without_a_citation_in_its_unit_the_nearest_in_its_section_counts(tmp_path):
    repo = _repo(tmp_path)
    text = ("# A\n\nThe runs of [a](../results/m/a.json) are below.\n\nSeed 0 scores 36.3%.\n\n"
            "# B\n\nSeed 0 scores 36.3%.\n")
    # Section A cites a.json; section B cites nothing.
    assert _problems(repo, text) == [
        "line 9: 36.3% cites no results file (none in its sentence or section) and is not "
        "marked as a paper's figure in \"Seed 0 scores 36.3%\""]
    # The nearest citation, not any in the section: b.json is nearer than a.json.
    text = ("See [a](../results/m/a.json) first.\n\n" + "A long aside. " * 20 + "\n\n"
            "Much later, 36.3% and 12.5% hold.\n\nAnd [b](../results/m/b.json).\n")
    assert _figures_of(_problems(repo, text)) == ["line 5: 36.3%"]


def test_table_rows_and_list_items_are_units(tmp_path):
    repo = _repo(tmp_path)
    table = ("| split | ours | paper (Table 1) |\n|---|---|---|\n"
             "| [a](../results/m/a.json) | 36.3% | 78.4% |\n"
             "| [b](../results/m/b.json) | 36.3% | 78.4% |\n")
    # Each row's own file; the paper's column is marked by its header.
    assert _figures_of(_problems(repo, table)) == ["line 4: 36.3%"]
    items = ("- seed 0 of [a](../results/m/a.json) scores 36.3%,\n  and seed 1 5%\n"
             "- seed 0 of [b](../results/m/b.json) scores 5%\n")
    assert _figures_of(_problems(repo, items)) == ["line 3: 5%"]


def test_a_cited_directory_cites_the_files_below_it_but_results_does_not(tmp_path):
    repo = _repo(tmp_path)
    assert _problems(repo, "The files of `results/m/` hold 12.5% and 36.3%.") == []
    assert _figures_of(_problems(repo, "The files of [results](../results/) hold 12.5%.")) == [
        "line 1: 12.5%"]
    # A page is not a source, nor a name typed without its directory.
    (repo / "results" / "README.md").write_text("12.5%")
    assert _figures_of(_problems(repo, "[the table](../results/README.md): 12.5%.")) == [
        "line 1: 12.5%"]
    assert _figures_of(_problems(repo, "`b.json` scores 12.5%.")) == ["line 1: 12.5%"]


def test_a_typed_family_of_files_cites_each_of_them(tmp_path):
    repo = _repo(tmp_path)
    assert _problems(repo, "Seeds in `results/m/<N>.json`: 12.5% and 36.3%.") == []
    assert _problems(repo, "Seeds in `results/m/{a,b}.json`: 12.5% and 36.3%.") == []
    # Only the files named: `{a,x}` is a.json (x.json does not exist), not b.json.
    assert _figures_of(_problems(repo, "In `results/m/{a,x}.json`: 12.5%.")) == [
        "line 1: 12.5%"]


def test_statistics_of_the_seeds_count_and_pooled_ones_where_files_are_cited_together(
        tmp_path):
    repo = _repo(tmp_path)
    # BLEU 7.1 and 8.2: mean 7.65, std 0.78 (sample: n - 1), not 0.55 (population).
    assert _problems(repo, "BLEU 7.65 ± 0.78 (results/m/a.json).") == []
    assert _figures_of(_problems(repo, "BLEU 7.65 ± 0.55 (results/m/a.json).")) == [
        "line 1: 0.55"]
    # The three seeds of a.json and b.json pooled: median 12.5, mean 17.9.
    pooled = "Pooled, mean 17.9% ([a](../results/m/a.json), [b](../results/m/b.json))."
    assert _problems(repo, pooled) == []
    assert _figures_of(_problems(repo, "Mean 17.9% ([a](../results/m/a.json)).")) == [
        "line 1: 17.9%"]


def test_figures_typed_without_a_percent_sign_are_checked_too(tmp_path):
    repo = tmp_path
    _results_file(repo, "m/c.json", [0.3634830002, 0.05, 1.0, 0.535])
    cite = " (results/m/c.json)"
    backed = "Over 16 seeds: median 53.5, min 5.0, max 100.0 (range 5.0–100.0), test 36.3."
    assert _problems(repo, backed + cite) == []
    drifted = "Over 16 seeds: median 53.6, mean 75.70 ± 40.4; min–max 0.0–97.1."
    assert _figures_of(_problems(repo, drifted + cite)) == [
        "line 1: 53.6", "line 1: 75.70", "line 1: 40.4", "line 1: 0.0", "line 1: 97.1"]
    # Capitals, the number before ±, spaced ranges and a range that ends in % count too.
    more = "Median 53.6; (74.31 ± 5.0 on dev) Range 5.03 – 97.13; range 5.03–100.0%."
    assert _figures_of(_problems(repo, more + cite)) == [
        "line 1: 53.6", "line 1: 74.31", "line 1: 5.03", "line 1: 97.13", "line 1: 5.03"]
    # Timings, learning rates and versions are not results.
    assert _problems(repo, "3.79 ms at p50 with Adam 0.0015 on 2.21-3.12.") == []


def test_a_papers_figure_and_a_goal_are_marked_and_nothing_else_is(tmp_path):
    repo = _repo(tmp_path)
    marked = ("Ours 36.3% (results/m/a.json); the paper reports 91.0% (median). "
              "The papers give 12.4 ± 2.3. Table 1 has 78.4%. The issue's goal is 50%; "
              "the aim 90%.")
    assert _problems(repo, marked) == []
    # A paper's column marks its cells, but not one that says the figure is ours.
    column = "| model | paper |\n|---|---|\n| x | Table 1: 78.4% | \n| y | ours: 78.4% |\n"
    assert _figures_of(_problems(repo, column)) == ["line 4: 78.4%"]
    # "paper-regime" names a configuration, "report" this project's command, and a mark
    # holds in its own clause only.
    unmarked = ("The paper-regime runs score 70.0%. The report shows 12.4%. "
                "The paper's figure is below; ours is 91.0%.")
    assert _figures_of(_problems(repo, unmarked)) == [
        "line 1: 70.0%", "line 1: 12.4%", "line 1: 91.0%"]


def test_the_check_names_each_problem_with_its_document_and_line(tmp_path):
    repo = _repo(tmp_path)
    page = repo / "docs" / "page.md"
    page.parent.mkdir()
    page.write_text("# Page\n\nSeed 0 scores 12.5% ([a](../results/m/a.json)).\n")
    assert check_documents([page], repo / "results") == [
        'docs/page.md:3: 12.5% is in none of results/m/a.json (its sentence) in '
        '"Seed 0 scores 12.5%"']


def test_report_check_reads_the_serving_page_and_the_results_readme_too(tmp_path):
    # `report --check` (stale_reports) on a checkout whose serving/README.md holds the planted
    # figure: the results directory is the repository's, the README a copy.
    from compgen_tf.reporting.report import stale_reports

    (tmp_path / "results").symlink_to(RESULTS_DIR)
    (tmp_path / "README.md").write_text((REPO / "README.md").read_text())
    (tmp_path / "serving").mkdir()
    (tmp_path / "serving" / "README.md").write_text(
        PLANTED.read_text().replace("../../results/", "../results/"))
    stale = stale_reports(tmp_path / "results", tmp_path / "results" / "README.md",
                          tmp_path / "no_runs", tmp_path / "README.md")
    assert [line.split(" in \"")[0] for line in stale] == [
        f"unbacked figure: {tmp_path / 'serving' / 'README.md'}:4: 53.5% is in none of "
        "results/seq2seq/simple.json (its sentence)"]
