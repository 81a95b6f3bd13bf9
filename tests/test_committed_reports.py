"""The committed tables are what the committed results files give (typed figures:
tests/test_figures.py)."""

from pathlib import Path

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
