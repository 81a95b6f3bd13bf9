"""Benchmark knowledge: read off the settings, said in each configuration's notes, shown in the
tables (issue 68)."""

import re
from pathlib import Path

import pytest

import tfds_scan
from compgen_tf.experiments.config import CONFIG_DIR, load_config
from compgen_tf.experiments.knowledge import LEARNED, benchmark_knowledge, knowledge_cell
from compgen_tf.reporting.report import SUMMARY_END, SUMMARY_START
from tfds_scan import episodes

REPO = Path(__file__).resolve().parents[1]
TASKS = (*tfds_scan.CONFIG_NAMES, *episodes.TASK_NAMES, "composition", "rule_learning",
         "palindromes")


def _task_of(path: Path) -> str | None:
    """The task a configuration file configures: its name, or the longest task its name
    starts with (an ablation such as add_jump_permutation_no_support_loss)."""
    matches = [t for t in TASKS if path.stem == t or path.stem.startswith(t + "_")]
    return max(matches, key=len) if matches else None


@pytest.mark.parametrize("settings, tags", [
    (("syntactic_attention", "addprim_jump", {}), []),
    (("syntactic_attention", "addprim_jump", {"syntax_tying": "bare_words"}),
     ["bare-word syntax tie"]),
    (("equivariant_seq2seq", "simple", {}), ["declared group: verbs"]),  # the model's default
    (("equivariant_seq2seq", "length", {"symmetry": "verb+direction"}),
     ["declared group: verbs and directions"]),
    (("equivariant_seq2seq", "simple", {"symmetry": "trivial"}), []),
    (("equivariant_seq2seq", "simple", {"symmetry": {"input_cycles": [["a", "b"]],
                                                      "output_cycles": [["A", "B"]]}}),
     ["declared group"]),
    (("meta_seq2seq", "add_jump_permutation", {}), ["episodes: verb class"]),
    (("meta_seq2seq", "around_right", {}), ["episodes: direction class"]),
    (("meta_seq2seq", "add_jump_standard", {}), []),  # episodes from the training split only
    (("symbol_convolution", "composition", {}), ["declared symmetry: symbols"]),
    (("seq2seq", "length", {"length_head": {"state_size": 3}}), []),
    (("stack_lstm", "palindromes", {}), []),
])
def test_knowledge_is_read_off_the_settings(settings, tags):
    assert [k.tag for k in benchmark_knowledge(*settings)] == tags


def test_cells_say_learned_or_what_is_encoded_and_never_guess():
    tied = {"model_args": {"syntax_tying": "bare_words"}}
    assert knowledge_cell("syntactic_attention", "addprim_jump", tied, short=True) == (
        "bare-word syntax tie")
    assert knowledge_cell("syntactic_attention", "addprim_jump", tied).startswith(
        "bare-word syntax tie: a word seen only as a one-word command")
    assert knowledge_cell("seq2seq", "simple", {"model_args": {}}) == LEARNED[0]
    assert knowledge_cell("seq2seq", "simple", {"model_args": {}}, short=True) == "learned"
    assert knowledge_cell("symbol_convolution", "rule_learning", None) == "not recorded"


def test_every_configuration_with_benchmark_knowledge_says_so_in_its_notes():
    said = re.compile(r"Benchmark knowledge \(([^)]*)\)")
    labelled = 0
    for path in sorted(CONFIG_DIR.glob("*/*.json")):
        if path.name == "search_space.json":
            continue
        config = load_config(path)
        found = {k.tag for k in benchmark_knowledge(path.parent.name, _task_of(path),
                                                     config["model_args"])}
        notes = config.get("notes", "")
        # A variant inherits its base's notes; the last statement is the one in force.
        stated = said.findall(notes)
        if found:
            labelled += 1
            assert stated and stated[-1] in found, (path, found, stated)
        else:
            assert not stated, (path, stated)
    assert labelled >= 15


def test_the_readme_shows_the_closest_configuration_first_and_labels_the_tie():
    text = (REPO / "README.md").read_text()
    block = text[text.index(SUMMARY_START):text.index(SUMMARY_END)]
    header = next(line for line in block.splitlines() if line.startswith("| paper |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines()
            if line.startswith("| Russin 2019 |") and "[addprim_jump" in line]
    names = [re.match(r"\[(\w+)\]", row[columns.index("results")]).group(1) for row in rows]
    assert names[0] == "addprim_jump_paper_regime", names
    assert rows[0][columns.index("provenance")] in ("faithful", "closest")
    assert rows[0][columns.index("knowledge")] == "learned"
    tied = rows[names.index("addprim_jump")]
    assert "bare-word syntax tie" in tied[columns.index("results")]  # the name says what it adds
    assert tied[columns.index("knowledge")] == "bare-word syntax tie"
    assert tied[columns.index("provenance")] == "post-hoc"
