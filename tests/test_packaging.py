"""Package data and output locations: what a wheel needs to work outside this checkout.

`.ci/wheel_check` runs the built wheel from elsewhere; these tests pin the pieces it relies on
in the checkout: configurations and paper figures found through the package from any
directory, the wheel's package data covering every one of them, and every output written
where the user points (the current directory by default), never into the package.
"""

import fnmatch
import json
import os
from pathlib import Path

import pytest

import compgen_tf
from compgen_tf import resources
from compgen_tf.cli.report import main as report
from compgen_tf.experiments.config import CONFIG_DIR, config_path, load_config
from compgen_tf.experiments.results import write_results

REPO = Path(__file__).resolve().parents[1]
PACKAGE = Path(compgen_tf.__file__).resolve().parent


def files_under(root: Path) -> list[Path]:
    """Every file below `root`, through symbolic links (the configs link) too."""
    return sorted(Path(folder) / name for folder, _, names in os.walk(root, followlinks=True)
                  for name in names)


def package_files():
    return [path for path in files_under(PACKAGE) if path.suffix != ".pyc"]


def test_the_committed_configurations_are_the_packages_resources():
    # Read through the package, and they are the repository's top-level configs/.
    assert CONFIG_DIR == resources.path("configs")
    assert CONFIG_DIR.parent == PACKAGE / "resources"
    assert CONFIG_DIR.resolve() == REPO / "configs"
    assert (CONFIG_DIR / "seq2seq" / "simple.json").read_bytes() == (
        REPO / "configs" / "seq2seq" / "simple.json").read_bytes()
    assert resources.path("papers.json").is_file()


def test_the_wheels_package_data_holds_every_configuration_and_the_paper_figures():
    tomllib = pytest.importorskip("tomllib")
    settings = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    setuptools = pytest.importorskip("setuptools")
    found = setuptools.find_packages(str(REPO), include=settings["packages"]["find"]["include"])
    assert "compgen_tf.resources" in found
    # Every folder of the packages that holds Python modules ships (none forgotten in a list).
    assert sorted(found) == sorted(
        ".".join(init.parent.relative_to(REPO).parts)
        for package in ("compgen_tf", "tfds_scan") for init in (REPO / package).rglob("__init__.py"))
    patterns = settings["package-data"]["compgen_tf.resources"]
    data = [path.relative_to(PACKAGE / "resources").as_posix()
            for path in files_under(PACKAGE / "resources") if path.suffix == ".json"]
    # The configurations, and the two files of the package's own.
    assert sorted(name for name in data if not name.startswith("configs/")) == [
        "numerics_changes.json", "papers.json"]
    assert len(data) == 2 + len(list((REPO / "configs").rglob("*.json")))
    left_out = [name for name in data
                if not any(fnmatch.fnmatchcase(name, pattern) and
                           name.count("/") == pattern.count("/") for pattern in patterns)]
    assert left_out == []


def test_a_configuration_is_found_by_name_from_another_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = config_path("seq2seq", "simple")
    assert path.is_absolute() and path == CONFIG_DIR / "seq2seq" / "simple.json"
    assert load_config(path) == load_config(REPO / "configs" / "seq2seq" / "simple.json")
    # A split without a file of its own falls back to the model's default.
    assert config_path("seq2seq", "addprim_turn_left") == CONFIG_DIR / "seq2seq" / "default.json"
    # --config PATH still reads a file of the user's, relative to the current directory,
    # and its base relative to that file.
    (tmp_path / "mine.json").write_text(json.dumps(
        {"base": str(CONFIG_DIR / "seq2seq" / "simple.json"), "training": {"max_steps": 7}}))
    assert load_config("mine.json")["training"]["max_steps"] == 7


def test_results_go_under_the_current_directory_by_default(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = {"seed": 0, "val_accuracy": 1.0, "test_accuracy": 0.5, "wall_time_s": 3.0,
           "steps": 10}
    path = write_results("seq2seq", "simple", "cmd", [run], {"keras": "3"})
    assert path == Path("results") / "seq2seq" / "simple.json"
    assert (tmp_path / "results" / "seq2seq" / "simple.json").is_file()


def test_the_report_reads_and_writes_where_it_is_told(tmp_path, monkeypatch, capsys):
    run = {"seed": 0, "val_accuracy": 1.0, "test_accuracy": 0.5, "wall_time_s": 3.0,
           "steps": 10}
    before = package_files()
    # By default: results/ of the current directory, and the README there when it has a
    # results table (as in the repository's root).
    monkeypatch.chdir(tmp_path)
    write_results("seq2seq", "simple", "cmd", [run, dict(run, seed=1)], {"keras": "3"})
    readme = tmp_path / "README.md"
    readme.write_text("# Mine\n\n<!-- results-summary:start -->\nold\n"
                      "<!-- results-summary:end -->\n")
    assert report([]) == 0
    assert (tmp_path / "results" / "README.md").read_text().startswith("# Results")
    assert (tmp_path / "results" / "plots" / "seq2seq__simple__seeds.png").is_file()
    summary = readme.read_text()
    assert "old" not in summary and "| baseline | seq2seq | [simple](results/" in summary
    # A README without that table is not the report's to touch.
    readme.write_text("# Mine\n")
    assert report([]) == 0
    assert readme.read_text() == "# Mine\n"
    # --results-dir elsewhere: only that directory is written (and no README but --readme's).
    elsewhere = tmp_path / "elsewhere"
    write_results("seq2seq", "simple", "cmd", [run], {"keras": "3"}, results_dir=elsewhere)
    readme.write_text("<!-- results-summary:start -->\n<!-- results-summary:end -->\n")
    assert report(["--results-dir", str(elsewhere)]) == 0
    assert (elsewhere / "README.md").is_file()
    assert readme.read_text() == "<!-- results-summary:start -->\n<!-- results-summary:end -->\n"
    assert report(["--results-dir", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: results directory {tmp_path / 'missing'} does not exist")
    assert package_files() == before


def test_no_module_looks_for_the_repository_root():
    # Path(__file__).parents[...] found configs/ and results/ beside the package: not there
    # once the package is installed.
    offenders = [f"{path.relative_to(REPO)}:{number}" for root in ("compgen_tf", "tfds_scan")
                 for path in sorted((REPO / root).rglob("*.py"))
                 for number, line in enumerate(path.read_text().splitlines(), 1)
                 if "parents[" in line]
    assert offenders == []
