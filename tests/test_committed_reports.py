"""The committed tables and typed figures are what the committed results files give."""

from pathlib import Path

from compgen_tf.reporting.figures import shown_forms, unbacked_figures
from compgen_tf.reporting.report import stale_reports

REPO = Path(__file__).resolve().parents[1]
RESULTS_DIR = REPO / "results"


def test_results_readme_summary_and_doc_tables_regenerate_identically(tmp_path):
    # No run directories here: curves come from the results files, as on a fresh clone.
    stale = stale_reports(RESULTS_DIR, RESULTS_DIR / "README.md", tmp_path / "no_runs",
                          REPO / "README.md")
    assert stale == [], "\n".join(stale) + "\n(run `python -m compgen_tf report`)"


def test_the_readme_stays_short():
    assert len((REPO / "README.md").read_bytes()) <= 12 * 1024


def test_typed_percentages_must_come_from_a_file_or_a_paper():
    forms = shown_forms([0.3634830002, 0.05, 1.0])
    backed = "Seed 15 scores 36.3%, seed 2 5.0% and 5%; all pass 100%."
    assert unbacked_figures(backed, forms) == []
    # Rounded by hand (36.35 -> 36.4) or made up: named with its line and sentence.
    drifted = "Intro.\nSeed 15 scores 36.4% here. Another 12.5% too."
    assert unbacked_figures(drifted, forms) == [
        'line 2: 36.4% in "Seed 15 scores 36.4%"', 'line 2: 12.5% in "Another 12.5%"']
    # A paper's figure is marked as such in its sentence or by its table column.
    assert unbacked_figures("Ours 36.3%; the paper reports 91.0% (median).", forms) == []
    table = "| model | ours | paper (Table 1) |\n|---|---|---|\n| x | 36.3% | 78.4% |\n"
    assert unbacked_figures(table, forms) == []
    assert unbacked_figures(table.replace("36.3%", "36.4%"), forms) == [
        'line 3: 36.4% in "36.4%"']


def test_figures_typed_without_a_percent_sign_are_checked_too():
    forms = shown_forms([0.3634830002, 0.05, 1.0, 0.535])
    backed = "Over 16 seeds: median 53.5, min 5.0, max 100.0 (range 5.0–100.0), test 36.3."
    assert unbacked_figures(backed, forms) == []
    drifted = "Over 16 seeds: median 53.6, mean 75.70 ± 40.4; min–max 0.0–97.1."
    assert [problem.split(" in ")[0] for problem in unbacked_figures(drifted, forms)] == [
        "line 1: 53.6", "line 1: 75.70", "line 1: 40.4", "line 1: 0.0", "line 1: 97.1"]
    # Capitals, the number before ±, spaced ranges and a range that ends in % count too.
    more = "Median 53.6. (74.31 ± 5.0 on dev) Range 5.03 – 97.13; range 5.03–100.0%."
    assert [problem.split(" in ")[0] for problem in unbacked_figures(more, forms)] == [
        "line 1: 53.6", "line 1: 74.31", "line 1: 5.03", "line 1: 97.13", "line 1: 5.03"]
    # Timings, learning rates and versions are not results; a paper's figure is marked.
    assert unbacked_figures("3.79 ms at p50 with Adam 0.0015 on 2.21-3.12.", forms) == []
    assert unbacked_figures("The paper reports median 91.0, mean 78.4 ± 27.4.", forms) == []
