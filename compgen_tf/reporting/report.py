"""Regenerate `results/README.md` from the committed results: `python -m compgen_tf report`.

    python -m compgen_tf report [--results-dir results] [--out results/README.md] [--runs-dir runs]
    python -m compgen_tf report --check     # exit 1 if the committed tables are stale

Reads every `results/**/*.json` file that has `runs` (the schema of
`compgen_tf.experiments.results`) and writes one table per paper, the paper's test accuracy
beside ours on the same split (`PAPER_RESULTS`; a split without results of ours
shows "—"), then any other results, then the benchmark files of
`results/benchmarks/` in a "Speed" section. Plots go to `plots/` next to the
README: the per-seed test accuracies of every results file with at least two runs,
and validation accuracy against training step for the seeds whose curve is known: from
their run directories (`RUNS/<model>/<name>/seed<N>/history.jsonl`) when they are on this
machine, else from the `validation_curve` the results file recorded.

Each row carries its results file's provenance label (faithful / variant chosen on
validation / variant chosen after test scores were seen) and reason. The project README's
results table (between its `results-summary` markers) is generated from the same files.

The output is deterministic (no dates, sorted inputs, PNGs without metadata):
regenerating without new results rewrites identical files. A malformed results
file stops the report with an error naming it (exit code 2).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

from compgen_tf.experiments.config import PROVENANCE_KINDS, ConfigError, check_provenance
from compgen_tf.experiments.results import RESULTS_DIR, load_results, summarize, validation_curve
from compgen_tf.reporting.figures import check_documents

REPO_DIR = Path(__file__).resolve().parents[2]
GENERATOR = "python -m compgen_tf report"
BENCHMARKS = "benchmarks"
PLOTS = "plots"

# The papers, in the order of their tables: key -> (title, what the numbers are).
PAPERS = {
    "baseline": (
        "Baseline seq2seq (Lake & Baroni 2018; Gordon et al. 2020)",
        "Paper: Gordon et al. 2020, Table 1, row 'seq2seq (comparable architecture)' (a "
        "single-layer bidirectional LSTM with 64 units, the model `configs/seq2seq` follows); "
        "Lake & Baroni 2018's numbers, as quoted in the same table, are in the source column."),
    "russin2019": (
        "Syntactic Attention (Russin et al. 2019, arXiv:1904.09708)",
        "Paper: mean ± std over 5 runs (add-jump: 25 runs, whose distribution is skewed: the "
        "paper's headline number is the median, 91.0)."),
    "gordon2020": (
        "Equivariant seq2seq (Gordon et al. 2020, ICLR)",
        "Paper: Table 1, row 'Equivariant seq2seq (ours)'."),
    "lake2019": (
        "Meta seq2seq (Lake 2019, NeurIPS)",
        "Paper: mean ± SD over 5 runs (Sec. 4). The mutual-exclusivity task is not SCAN; the "
        "others are SCAN test sets under Lake's meta-training paradigms (`tfds_scan.episodes`)."),
    "symmetry": (
        "Symmetry and systematicity (anonymous, under review)",
        "Not SCAN exact match: accuracy on the toy tasks (Tables 1 and 2) and the proportion of "
        "symbols after the central 'o' predicted correctly (Table 3, palindromes; the depth "
        "column 'N_A > 2' is the paper's test on strings with more than 4 `a` tokens, i.e. "
        "more than 2 nested `A`s). Composition and palindromes use our own optimiser and "
        "training length "
        "(the paper gives none): see configs/<model>/<task>.json."),
}

# Russin et al. 2019 on add-jump, beside our default and every add-jump variant of it.
_RUSSIN_ADD_JUMP = dict(paper="russin2019", mean=78.4, std=27.4, median=91.0, n=25)

# (model, results-file name) -> the paper's test accuracy in percent: mean, optional std,
# median and number of runs n, and where the number comes from.
PAPER_RESULTS = {
    ("seq2seq", "simple"): dict(
        paper="baseline", mean=100.0,
        source="Gordon et al. 2020 Table 1; Lake & Baroni 2018: 99.7"),
    ("seq2seq", "addprim_jump"): dict(
        paper="baseline", mean=0.0, std=0.0,
        source="Gordon et al. 2020 Table 1; Lake & Baroni 2018 (best model): 1.2"),
    ("seq2seq", "template_around_right"): dict(
        paper="baseline", mean=0.02, std=0.02,
        source="Gordon et al. 2020 Table 1, 'Around Right' (0.02 ± 2e-2); Lake & Baroni: NA"),
    ("seq2seq", "length"): dict(
        paper="baseline", mean=12.4, std=2.3,
        source="Gordon et al. 2020 Table 1; Lake & Baroni 2018: 13.8"),

    ("syntactic_attention", "simple"): dict(
        paper="russin2019", mean=100.0, std=0.0, n=5, source="Table 1"),
    ("syntactic_attention", "addprim_jump"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (median 91.0 ± 27.4) and Sec. 3.3 (mean 78.4); ours: add-jump's "
               "configuration, syntax tying and the first step on words (docs/dev_splits.md)"),
    ("syntactic_attention", "addprim_turn_left"): dict(
        paper="russin2019", mean=99.9, std=0.16, n=5, source="Table 1"),
    ("syntactic_attention", "length"): dict(
        paper="russin2019", mean=15.2, std=0.7, n=5, source="Table 1"),
    ("syntactic_attention", "template_jump_around_right"): dict(
        paper="russin2019", mean=98.9, std=2.3, n=5, source="Table 5 (supp.)"),
    ("syntactic_attention", "template_right"): dict(
        paper="russin2019", mean=99.1, std=1.8, n=5, source="Table 5 (supp.), 'P right'"),
    ("syntactic_attention", "template_opposite_right"): dict(
        paper="russin2019", mean=10.5, std=8.8, n=5,
        source="Table 5 (supp.), 'P opposite right'"),
    ("syntactic_attention", "template_around_right"): dict(
        paper="russin2019", mean=28.9, std=34.8, n=5, source="Table 5 (supp.), 'P around right'"),
    ("syntactic_attention", "addprim_jump_default"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (add-jump); our default.json, without syntax tying or the first-step "
               "mask (add-jump's configuration before 2026-11-28)"),
    ("syntactic_attention", "addprim_jump_paper_regime"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (add-jump); the paper's training regime on default.json's model "
               "(configs/syntactic_attention/paper_regime.json: batch 1, 200,000 updates)"),
    ("syntactic_attention", "addprim_jump_batch64"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (add-jump); our earlier configuration: batch 64 for 3,200 steps, "
               "uniform embeddings"),
    ("syntactic_attention", "addprim_jump_normal_embeddings"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (add-jump); earlier batch-64 variant: N(0, 1) embeddings"),
    ("syntactic_attention", "addprim_jump_normal_embeddings_decay"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (add-jump); earlier batch-64 variant: N(0, 1) embeddings and a "
               "decaying learning rate"),
    ("syntactic_attention", "addprim_jump_zero_boundary_semantics"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (add-jump); our variant: zero semantic vectors for <sos>/<eos> "
               "(their syntactic vectors start at zero), otherwise the default configuration"),
    ("syntactic_attention", "addprim_jump_zero_boundaries_small_syntax"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (add-jump); our variant: zero boundary semantics as above, and "
               "syntactic embeddings starting at U(-0.05, 0.05)"),
    ("syntactic_attention", "addprim_jump_zero_boundaries_syntax_noise"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (add-jump); our variant: zero boundary semantics as above, and in "
               "training each word's syntactic row replaced by an N(0, 1) draw with "
               "probability 0.1"),
    ("syntactic_attention", "addprim_jump_syntax_l2"): dict(
        _RUSSIN_ADD_JUMP,
        source="Table 1 (add-jump); our variant: an L2 penalty of 1e-5 on the syntactic "
               "embeddings, otherwise the default configuration"),
    ("syntactic_attention", "addprim_jump_sequential_semantics"): dict(
        paper="russin2019", mean=42.3, std=32.7, n=5,
        source="Table 2, ablation 'Sequential semantics'"),
    ("syntactic_attention", "addprim_jump_syntax_action"): dict(
        paper="russin2019", mean=88.7, std=14.2, n=5, source="Table 2, ablation 'Syntax-action'"),
    ("syntactic_attention", "addprim_jump_nonlinear_semantics"): dict(
        paper="russin2019", mean=84.4, std=14.1, n=5,
        source="Table 3 (supp.), ablation 'Nonlinear semantics'"),
    ("syntactic_attention", "addprim_jump_num1"): dict(
        paper="russin2019", mean=84.4, std=28.5, n=5,
        source="Table 4 (supp.): 1 extra 'jump' command, 5 random samples (our rep1-5)"),
    ("syntactic_attention", "addprim_jump_num2"): dict(
        paper="russin2019", mean=100.0, std=0.01, n=5,
        source="Table 4 (supp.): 2 extra 'jump' commands, 5 random samples (our rep1-5)"),

    ("equivariant_seq2seq", "simple"): dict(paper="gordon2020", mean=100.0, source="Table 1"),
    ("equivariant_seq2seq", "addprim_jump"): dict(
        paper="gordon2020", mean=99.1, std=0.04, source="Table 1, 'Add Jump'"),
    ("equivariant_seq2seq", "template_around_right"): dict(
        paper="gordon2020", mean=92.0, std=0.24, source="Table 1, 'Around Right'"),
    ("equivariant_seq2seq", "length"): dict(
        paper="gordon2020", mean=15.9, std=3.2, source="Table 1"),

    ("meta_seq2seq", "mutual_exclusivity"): dict(
        paper="lake2019", mean=100.0, std=0.0, n=5, source="Sec. 4.2"),
    ("meta_seq2seq", "add_jump_permutation"): dict(
        paper="lake2019", mean=99.95, std=0.08, n=5,
        source="Table 2 / Sec. 4.3, permutation meta-training"),
    ("meta_seq2seq", "add_jump_augmentation"): dict(
        paper="lake2019", mean=98.71, std=1.49, n=5,
        source="Table 2 / Sec. 4.4, augmentation meta-training"),
    ("meta_seq2seq", "around_right"): dict(
        paper="lake2019", mean=99.96, std=0.08, n=5, source="Table 3 / Sec. 4.5"),
    ("meta_seq2seq", "around_right_scaled_attention"): dict(
        paper="lake2019", mean=99.96, std=0.08, n=5,
        source="Table 3 / Sec. 4.5; ours with decoder attention scores over sqrt(m), Eq. 2"),
    ("meta_seq2seq", "length"): dict(
        paper="lake2019", mean=16.64, std=2.10, n=5, source="Table 3 / Sec. 4.6"),
    ("meta_seq2seq", "length_authors_protocol"): dict(
        paper="lake2019", mean=16.64, std=2.10, n=5,
        source="Table 3 / Sec. 4.6; the authors' code's attention scaling, decoder cell "
               "states, last-episode model and five test support sets "
               "(configs/meta_seq2seq/length_authors_protocol.json)"),
    ("meta_seq2seq", "add_jump_permutation_no_support_loss"): dict(
        paper="lake2019", mean=5.43, std=7.6, n=5,
        source="Table 2 / Sec. 4.3, ablation without support loss"),
    ("meta_seq2seq", "add_jump_permutation_no_decoder_attention"): dict(
        paper="lake2019", mean=10.32, std=6.4, n=5,
        source="Table 2 / Sec. 4.3, ablation without decoder attention"),
    ("meta_seq2seq", "add_jump_standard_seq2seq"): dict(
        paper="lake2019", mean=0.03, std=0.02, n=5,
        source="Table 2 / Sec. 4.3, standard seq2seq (memory removed), standard training"),

    ("symbol_convolution", "rule_learning"): dict(
        paper="symmetry", mean=100.0,
        source="Table 1, convolution; recurrent net and MLP: 50"),
    ("symbol_convolution", "rule_learning_mlp_baseline"): dict(
        paper="symmetry", mean=50.0, source="Table 1, MLP baseline"),
    ("symbol_convolution", "rule_learning_recurrent_baseline"): dict(
        paper="symmetry", mean=50.0, source="Table 1, recurrent-net baseline"),
    ("symbol_convolution", "composition"): dict(
        paper="symmetry", mean=100.0,
        source="Table 2, convolution; recurrent net and MLP: 0"),
    ("mlp_baseline", "composition"): dict(
        paper="symmetry", mean=0.0, source="Table 2, multi-layer perceptron"),
    ("recurrent_baseline", "composition"): dict(
        paper="symmetry", mean=0.0, source="Table 2, recurrent net"),
    ("seq2seq", "composition"): dict(
        paper="symmetry", mean=0.0,
        source="Table 2, recurrent net; ours: the SCAN papers' LSTM encoder-decoder"),
    ("stack_lstm", "palindromes_in_domain"): dict(
        paper="symmetry", mean=100.0,
        source="Table 3, convolutional LSTM, in-domain; standard LSTM: 100"),
    ("stack_lstm", "palindromes_long"): dict(
        paper="symmetry", mean=100.0,
        source="Table 3, convolutional LSTM, longer strings; standard LSTM: 77"),
    ("stack_lstm", "palindromes_deep"): dict(
        paper="symmetry", mean=100.0,
        source="Table 3, convolutional LSTM, N_A > 2; standard LSTM: 82"),
    ("stack_lstm", "palindromes_in_domain_lr0.01_early_stop"): dict(
        paper="symmetry", mean=100.0,
        source="Table 3, in-domain; earlier configuration: Adam 0.01, at most 8,000 steps, "
               "stop at 100% validation accuracy"),
    ("stack_lstm", "palindromes_long_lr0.01_early_stop"): dict(
        paper="symmetry", mean=100.0,
        source="Table 3, longer strings; earlier configuration (Adam 0.01, early stop)"),
    ("stack_lstm", "palindromes_deep_lr0.01_early_stop"): dict(
        paper="symmetry", mean=100.0,
        source="Table 3, N_A > 2; earlier configuration (Adam 0.01, early stop)"),
    ("stack_lstm", "palindromes_in_domain_full_budget"): dict(
        paper="symmetry", mean=100.0,
        source="Table 3, in-domain; earlier configuration's variant: Adam 0.01 for all "
               "8,000 steps, no stop at 100% validation accuracy"),
    ("stack_lstm", "palindromes_long_full_budget"): dict(
        paper="symmetry", mean=100.0,
        source="Table 3, longer strings; variant: Adam 0.01 for all 8,000 steps"),
    ("stack_lstm", "palindromes_deep_full_budget"): dict(
        paper="symmetry", mean=100.0,
        source="Table 3, N_A > 2; variant: Adam 0.01 for all 8,000 steps"),
    ("lstm_baseline", "palindromes_in_domain"): dict(
        paper="symmetry", mean=100.0, source="Table 3, standard LSTM (100 units), in-domain"),
    ("lstm_baseline", "palindromes_long"): dict(
        paper="symmetry", mean=77.0, source="Table 3, standard LSTM, longer strings"),
    ("lstm_baseline", "palindromes_deep"): dict(
        paper="symmetry", mean=82.0, source="Table 3, standard LSTM, N_A > 2"),
}

# The English-French experiment of Russin et al. 2020 (Sec. 4): no number of ours is comparable
# with a figure of that paper's table, which our copy of the text does not have.
MT_TITLE = "Machine translation (Russin et al. 2020, Sec. 4: the small English–French set)"
MT_EXPLANATION = (
    "Paper: Syntactic Attention and its 'c_i used for translation' variant (our "
    "`syntax_action`), trained with learning rate 0.00015, \"perform comparably\" in BLEU to "
    "basic recurrent models (Lake & Baroni 2018; Bastings et al. 2018) on Lake & Baroni's "
    "10,000 training / 1,191 test pairs. The BLEU figures of the paper's table are not in our "
    "copy of its text, so no row has a paper number. Ours, per row over seeds (mean ± std, "
    "median, min–max): corpus BLEU of free greedy decoding on the test pairs (sacreBLEU's "
    "method, no tokenizer), BLEU the authors' way (`compgen_tf.training.bleu`: NLTK's "
    "conventions, a decoding budget of the split's longest target, every reference of an "
    "identical source, targets under 4 words skipped), test exact match, and how many of the "
    "8 daxy sentences each seed translates exactly (trained with the 1,000 `i am daxy .` "
    "copies). Each seed's model is selected on validation BLEU (its validation carve holds "
    "about 200 of those copies). Every seed's daxy translations are in its file and below.")
MT_HEADER = ("| model | split | BLEU: mean ± std | median | min–max | BLEU, authors' way: "
             "mean ± std | median | min–max | exact match (%) | daxy x/8 per seed | n "
             "| wall time / run | provenance |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def is_translation(entry: dict) -> bool:
    """Whether a results entry is of the English-French set (`tfds_scan.mt`'s configs)."""
    from tfds_scan.mt import CONFIG_NAMES

    return entry.get("split") in CONFIG_NAMES


def _number_cells(values) -> list[str]:
    stats = summarize(values)
    spread = f" ± {stats['std']:.2f}" if stats["n"] > 1 else ""
    return [f"{stats['mean']:.2f}{spread}", f"{stats['median']:.2f}",
            f"{stats['min']:.2f}–{stats['max']:.2f}"]


def _translation_row(model: str, name: str, entry: dict) -> str:
    runs = entry["runs"]
    missing = [field for field in ("test_bleu", "test_bleu_authors", "daxy_exact")
               if any(field not in run for run in runs)]
    if missing:
        raise ReportError(f"malformed results file {entry['path']}: a translation results "
                          f"file needs {missing} in every run")
    cells = [model, _split_cell(name, entry),
             *_number_cells([run["test_bleu"] for run in runs]),
             *_number_cells([run["test_bleu_authors"] for run in runs]),
             our_cells(entry)[0],
             ", ".join(f"{run['daxy_exact']}/8" for run in runs),
             *our_cells(entry)[3:5], provenance_cell(entry)]
    return "| " + " | ".join(cells) + " |"


def _translation_section(results: dict, used: set) -> list[str]:
    keys = [key for key in sorted(results) if is_translation(results[key])]
    lines = [f"## {MT_TITLE}", "", MT_EXPLANATION, ""]
    if not keys:
        return lines + ["No results yet.", ""]
    used.update(keys)
    lines += [MT_HEADER] + [_translation_row(*key, results[key]) for key in keys] + [""]
    for key in keys:
        lines += _daxy_table(*key, results[key])
    return lines


def _daxy_table(model: str, name: str, entry: dict) -> list[str]:
    """Each seed's translation of the 8 daxy sentences, exact ones in bold."""
    from tfds_scan import mt

    runs = [run for run in entry["runs"] if "daxy_translations" in run]
    if not runs:
        return []
    pairs = mt.mt_examples(entry["split"])["daxy"]
    lines = [f"### {model} / {name}: the daxy sentences", "",
             "| source | reference | " + " | ".join(f"seed {run['seed']}" for run in runs)
             + " |", "|---|---|" + "---|" * len(runs)]
    for index, (source, reference) in enumerate(pairs):
        said = [run["daxy_translations"][index] for run in runs]
        lines.append("| " + " | ".join([source, reference] + [
            f"**{text}**" if text == reference else (text or "(empty)") for text in said])
            + " |")
    return lines + [""]


# The README's results table: the headline row of each paper experiment (every row, with
# the variants and the reasons behind each provenance label, is in results/README.md).
SUMMARY_START = "<!-- results-summary:start -->"
SUMMARY_END = "<!-- results-summary:end -->"
SHORT_TITLES = {"baseline": "baseline", "russin2019": "Russin 2019",
                "gordon2020": "Gordon 2020", "lake2019": "Lake 2019",
                "symmetry": "Symmetry"}
SUMMARY_ROWS = [
    ("seq2seq", "simple"), ("seq2seq", "addprim_jump"), ("seq2seq", "template_around_right"),
    ("seq2seq", "length"),
    ("syntactic_attention", "simple"), ("syntactic_attention", "addprim_jump"),
    ("syntactic_attention", "addprim_jump_default"),
    ("syntactic_attention", "addprim_jump_paper_regime"),
    ("syntactic_attention", "addprim_turn_left"), ("syntactic_attention", "length"),
    ("syntactic_attention", "template_around_right"),
    ("equivariant_seq2seq", "simple"), ("equivariant_seq2seq", "addprim_jump"),
    ("equivariant_seq2seq", "template_around_right"), ("equivariant_seq2seq", "length"),
    ("meta_seq2seq", "mutual_exclusivity"), ("meta_seq2seq", "add_jump_permutation"),
    ("meta_seq2seq", "add_jump_augmentation"), ("meta_seq2seq", "around_right"),
    ("meta_seq2seq", "length"), ("meta_seq2seq", "length_authors_protocol"),
    ("symbol_convolution", "rule_learning"), ("symbol_convolution", "composition"),
    ("mlp_baseline", "composition"), ("recurrent_baseline", "composition"),
    ("seq2seq", "composition"),
    ("stack_lstm", "palindromes_long"), ("stack_lstm", "palindromes_deep"),
    ("lstm_baseline", "palindromes_long"), ("lstm_baseline", "palindromes_deep"),
]

TABLE_HEADER = ("| model | split | paper (test %) | ours: mean ± std | median | min–max | n "
                "| wall time / run | provenance | paper source |\n"
                "|---|---|---|---|---|---|---|---|---|---|")


class ReportError(ValueError):
    """A results file the report cannot use."""


# --------------------------------------------------------------------------- reading

def read_results_dir(results_dir: Path):
    """(results, benchmarks, reruns): results keyed by (model, name); benchmark documents by
    path; results of re-run sets (`<set>/<model>/<name>.json`, e.g. `core_0.2.0/`: earlier
    results trained again on newer code) keyed by (set, model, name)."""
    results, benchmarks, reruns = {}, {}, {}
    for path in sorted(results_dir.rglob("*.json"), key=lambda p: p.relative_to(results_dir)
                       .as_posix()):
        relative = path.relative_to(results_dir)
        try:
            document = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise ReportError(f"{path}: not valid JSON: {error}") from error
        if relative.parts[0] == BENCHMARKS:
            benchmarks[relative.as_posix()] = document
            continue
        if not isinstance(document, dict) or "runs" not in document:
            print(f"note: {path} has no 'runs': not a results file, skipped", file=sys.stderr)
            continue
        entry = _check_results(path, document)
        if len(relative.parts) == 3:
            entry["path"] = relative.as_posix()
            reruns[(relative.parts[0], entry["model"], path.stem)] = entry
            continue
        key = (entry["model"], path.stem)
        if key in results:
            raise ReportError(f"{path}: a second results file for model {key[0]!r} named "
                              f"{key[1]!r} (the other: {results[key]['path']})")
        entry["path"] = relative.as_posix()
        results[key] = entry
    return results, benchmarks, reruns


def _check_results(path: Path, document: dict) -> dict:
    try:
        load_results(path)
    except ValueError as error:
        raise ReportError(f"malformed results file {error}") from error
    runs = document["runs"]
    if not isinstance(runs, list) or not runs:
        raise ReportError(f"malformed results file {path}: 'runs' must be a non-empty list")
    for index, run in enumerate(runs):
        where = f"malformed results file {path}: runs[{index}]"
        if not isinstance(run, dict):
            raise ReportError(f"{where} is not an object")
        missing = {"seed", "test_accuracy"} - set(run)
        if missing:
            raise ReportError(f"{where} lacks {sorted(missing)}")
        for field in ("test_accuracy", "val_accuracy"):
            value = run.get(field)
            if field in run and (not isinstance(value, (int, float)) or isinstance(value, bool)
                                 or not 0.0 <= value <= 1.0):
                raise ReportError(f"{where}: {field} must be a fraction in [0, 1], got "
                                  f"{value!r}")
    if not isinstance(document["model"], str) or not document["model"]:
        raise ReportError(f"malformed results file {path}: 'model' must be a model name")
    if "provenance" not in document:
        raise ReportError(f"malformed results file {path}: missing keys ['provenance'] (how its "
                          f"configuration was chosen; see compgen_tf.experiments.results)")
    try:
        check_provenance(document["provenance"], origin=f"malformed results file {path}")
    except ConfigError as error:
        raise ReportError(str(error)) from error
    return {"model": document["model"], "split": document["split"], "runs": runs,
            "versions": document.get("versions", {}), "provenance": document["provenance"]}


# --------------------------------------------------------------------------- formatting

def _percent(fraction: float) -> str:
    return f"{100.0 * fraction:.1f}"


def _paper_number(value: float) -> str:
    text = f"{value:.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def paper_cell(paper: dict) -> str:
    text = _paper_number(paper["mean"])
    if "std" in paper:
        text += f" ± {_paper_number(paper['std'])}"
    extras = []
    if "median" in paper:
        extras.append(f"median {_paper_number(paper['median'])}")
    if "n" in paper:
        extras.append(f"n={paper['n']}")
    return text + (f" ({', '.join(extras)})" if extras else "")


def _wall_time(seconds) -> str:
    if seconds is None:
        return "—"
    if seconds < 100:
        return f"{seconds:.1f} s"
    if seconds < 6000:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def our_stats(entry: dict) -> dict:
    accuracies = [run["test_accuracy"] for run in entry["runs"]]
    times = [run["wall_time_s"] for run in entry["runs"] if run.get("wall_time_s") is not None]
    return dict(summarize(accuracies), wall_time=statistics.fmean(times) if times else None)


def our_cells(entry: dict | None) -> list[str]:
    """mean ± std, median, min–max, n and wall time: the same statistics on every row."""
    if entry is None:
        return ["—"] * 5
    stats = our_stats(entry)
    spread = f" ± {_percent(stats['std'])}" if stats["n"] > 1 else ""  # no std from one run
    return [f"{_percent(stats['mean'])}{spread}", _percent(stats["median"]),
            f"{_percent(stats['min'])}–{_percent(stats['max'])}", str(stats["n"]),
            _wall_time(stats["wall_time"])]


def provenance_cell(entry: dict | None, with_reason: bool = True) -> str:
    """The row's marker (`PROVENANCE_KINDS`), and the one-line reason its file gives."""
    if entry is None:
        return "—"
    provenance = entry["provenance"]
    label = PROVENANCE_KINDS[provenance["kind"]]
    return f"{label}: {provenance['reason']}" if with_reason else label


def _split_cell(name: str, entry: dict | None) -> str:
    if entry is None:
        return name
    if "pooled" in entry:
        return f"{name} (pooled: {', '.join(f'[{p}]({p})' for p in entry['pooled'])})"
    return f"[{name}]({entry['path']})"


def pooled_entry(results: dict, model: str, name: str) -> dict | None:
    """Runs of `<name>_rep<R>` files pooled, for paper numbers averaged over data samples."""
    keys = sorted(k for k in results if k[0] == model and k[1].startswith(f"{name}_rep")
                  and k[1][len(name) + 4:].isdigit())
    if not keys:
        return None
    # Pooled files carry the least trustworthy of their provenances.
    provenances = [results[k]["provenance"] for k in keys]
    worst = max(provenances, key=lambda p: list(PROVENANCE_KINDS).index(p["kind"]))
    return {"model": model, "split": name, "pooled": [results[k]["path"] for k in keys],
            "runs": [run for k in keys for run in results[k]["runs"]], "keys": keys,
            "provenance": worst}


# --------------------------------------------------------------------------- plots

def _matplotlib():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(figure, path: Path):
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=100, metadata={"Software": None})
    _matplotlib().close(figure)


def plot_seeds(entry: dict, paper: dict | None, path: Path):
    """Per-seed test accuracy: one dot per seed, our mean and median, the paper's numbers."""
    plt = _matplotlib()
    values = sorted(100.0 * run["test_accuracy"] for run in entry["runs"])
    figure, axes = plt.subplots(figsize=(6.4, 3.2))
    # Deterministic spread: dots with equal values side by side, not on top of each other.
    seen: dict[float, int] = {}
    xs = []
    for value in values:
        count = seen.get(round(value, 1), 0) % 15
        seen[round(value, 1)] = count + 1
        xs.append((count + 1) // 2 * 0.06 * (1 if count % 2 else -1))
    axes.scatter(values, xs, s=36, color="tab:blue", alpha=0.8, zorder=3,
                 label=f"ours, per seed (n={len(values)})")
    axes.axvline(statistics.fmean(values), color="tab:blue", linewidth=1.5, label="our mean")
    axes.axvline(statistics.median(values), color="tab:blue", linewidth=1.5, linestyle=":",
                 label="our median")
    if paper is not None:
        axes.axvline(paper["mean"], color="tab:red", linewidth=1.5, linestyle="--",
                     label="paper mean")
        if "median" in paper:
            axes.axvline(paper["median"], color="tab:red", linewidth=1.5, linestyle="-.",
                         label="paper median")
    axes.set_xlim(-2, 102)
    axes.set_ylim(-0.5, 0.5)
    axes.set_yticks([])
    axes.set_xlabel("test exact match (%)")
    axes.set_title(f"{entry['model']} on {entry['split']}:\ntest accuracy per seed", fontsize=10)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=3, fontsize=8,
                frameon=False)
    _save(figure, path)


def _curves(entry: dict, name: str, runs_dir: Path) -> list:
    """[(seed, [(step, validation %)])] for each seed whose curve is known: from its run
    directory's `history.jsonl` when it is here, else from the `validation_curve` its results
    entry recorded (runs trained before results kept curves have none)."""
    curves = []
    for run in sorted(entry["runs"], key=lambda r: r["seed"]):
        history = runs_dir / entry["model"] / name / f"seed{run['seed']}" / "history.jsonl"
        points = validation_curve(history) or run.get("validation_curve") or []
        if points:
            curves.append((run["seed"], [(step, 100.0 * accuracy) for step, accuracy in points]))
    return curves


def plot_curves(curves: list, entry: dict, name: str, path: Path):
    """Validation accuracy against step, one line per seed (`_curves`)."""
    plt = _matplotlib()
    figure, axes = plt.subplots(figsize=(6.4, 3.6))
    for seed, points in curves:
        axes.plot([s for s, _ in points], [a for _, a in points], linewidth=1.2,
                  label=f"seed {seed}")
    axes.set_ylim(-2, 102)
    axes.set_xlabel("training step")
    axes.set_ylabel("validation exact match (%)")
    axes.set_title(f"{entry['model']} on {name}:\nvalidation accuracy during training",
                   fontsize=10)
    if len(curves) <= 10:
        axes.legend(fontsize=8, ncol=2)
    _save(figure, path)


# --------------------------------------------------------------------------- the report

def _table_row(model, name, paper, entry) -> str:
    cells = [model, _split_cell(name, entry), paper_cell(paper) if paper else "—",
             *our_cells(entry), provenance_cell(entry), paper["source"] if paper else "—"]
    return "| " + " | ".join(cells) + " |"


def _speed_section(benchmarks: dict) -> list[str]:
    lines = ["## Speed", ""]
    if not benchmarks:
        return lines + [f"No benchmark files yet (`{BENCHMARKS}/*.json`).", ""]
    lines += ["Benchmark files (nested fields such as versions omitted; see each file).", ""]
    for relative, document in benchmarks.items():
        records = document if isinstance(document, list) else [document]
        records = [r for r in records if isinstance(r, dict)]
        columns = []
        for record in records:
            columns += [k for k, v in record.items() if k not in columns
                        and not isinstance(v, (dict, list))]
        lines += [f"### [{relative}]({relative})", ""]
        if not columns:
            lines += ["(no scalar fields)", ""]
            continue
        lines += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for record in records:
            lines.append("| " + " | ".join(_scalar(record.get(c)) for c in columns) + " |")
        lines.append("")
    return lines


# Re-runs whose earlier results file has another name: the rule-learning baselines were
# written by a script since removed, under the convolution model's directory.
EARLIER_NAMES = {
    ("mlp_baseline", "rule_learning"): ("symbol_convolution", "rule_learning_mlp_baseline"),
    ("recurrent_baseline", "rule_learning"): ("symbol_convolution",
                                              "rule_learning_recurrent_baseline"),
}


def _rerun_section(results: dict, reruns: dict) -> list[str]:
    """One table per re-run set: each re-run beside the results file it trains again."""
    lines = []
    for set_name in sorted({key[0] for key in reruns}):
        lines += [f"## Re-runs: `{set_name}/`", "",
                  "Earlier results trained again, with the same configuration, on the code "
                  "named by each file's `versions` (package version and commit). The earlier "
                  "files stay as they were.", "",
                  "| model | results file | earlier: mean ± std (n) | re-run: mean ± std "
                  "| median | min–max | n | wall time / run | compgen-tf | provenance |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for (_, model, name), entry in sorted((k, v) for k, v in reruns.items()
                                              if k[0] == set_name):
            earlier = results.get(EARLIER_NAMES.get((model, name), (model, name)))
            before = our_cells(earlier)
            cells = [model, f"[{name}]({entry['path']})",
                     f"{before[0]} (n={before[3]})" if earlier else "—", *our_cells(entry),
                     str(entry.get("versions", {}).get("compgen-tf", "—")),
                     provenance_cell(entry)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return lines


def _scalar(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace("|", "\\|")


def render_report(results_dir: Path, out: Path, runs_dir: Path):
    """The text of `out` (the results README) and the plots it shows, as
    `(text, [(png path, draw function)])`; nothing is written."""
    results_dir, out, runs_dir = Path(results_dir), Path(out), Path(runs_dir)
    results, benchmarks, reruns = read_results_dir(results_dir)
    plots_dir = out.parent / PLOTS
    lines = [
        "# Results",
        "",
        f"<!-- Generated by `{GENERATOR}`: do not edit by hand. -->",
        f"**Generated by `{GENERATOR}` from the JSON files of this directory: do not edit it "
        "by hand.** Rerun that command after adding results.",
        "",
        "Accuracies are exact match on the split's test set, in percent (a command counts only "
        "if its whole action sequence is right); ours are over seeds (`std` is the sample "
        "standard deviation, absent for one seed), each seed's model selected on validation "
        "exact match. A split name links to its results file (command, seeds, versions, "
        "configuration). \"—\" in our columns: no result yet.",
        "",
        "Provenance, from each results file: **faithful** (the paper's setup as far as the "
        "paper gives it), **variant (chosen on validation)**, or **variant (chosen after test "
        "scores were seen)**, which also covers choices whose record does not show otherwise "
        "(\"not recorded\").",
        "",
    ]
    used = set()
    for key, (title, explanation) in PAPERS.items():
        lines += [f"## {title}", "", explanation, "", TABLE_HEADER]
        for model, name, paper, entry in _paper_rows(results, key, used):
            lines.append(_table_row(model, name, paper, entry))
        lines.append("")
    lines += _translation_section(results, used)
    others = [key for key in sorted(results) if key not in used]
    lines += ["## Other results", ""]
    if others:
        lines += ["Results without a paper number to compare with.", "", TABLE_HEADER]
        lines += [_table_row(model, name, None, results[(model, name)]) for model, name in others]
    else:
        lines.append("None.")
    lines.append("")
    lines += _rerun_section(results, reruns)

    plots, plot_lines = [], []
    for model, name in sorted(results):
        entry = results[(model, name)]
        images = []
        if len(entry["runs"]) >= 2:
            path = plots_dir / f"{model}__{name}__seeds.png"
            paper = _paper_for(model, name)
            images.append((path, "test accuracy per seed",
                           lambda e=dict(entry, split=name), p=paper, o=path: plot_seeds(e, p, o)))
        path = plots_dir / f"{model}__{name}__curves.png"
        curves = _curves(entry, name, runs_dir)
        if curves or path.exists():  # a plot committed from runs trained elsewhere is kept
            images.append((path, "validation accuracy during training",
                           (lambda c=curves, e=entry, n=name, o=path: plot_curves(c, e, n, o))
                           if curves else None))
        if images:
            plot_lines += [f"### {model} / {name}", ""]
            for image, caption, draw in images:
                relative = image.relative_to(out.parent).as_posix()
                plot_lines += [f"![{model} {name}: {caption}]({relative})", ""]
                plots.append((image, draw))
    lines += ["## Plots", ""]
    if plot_lines:
        lines += ["Per-seed test accuracy (results with at least two seeds; dashed: the "
                  "paper's mean) and validation accuracy during training (runs whose "
                  "directories are on the machine that generated this file).", ""]
        lines += plot_lines
    else:
        lines += ["None yet (they need results with at least two seeds, or local run "
                  "directories).", ""]
    lines += _speed_section(benchmarks)
    return "\n".join(lines).rstrip("\n") + "\n", plots


def _paper_rows(results: dict, paper_key: str, used: set):
    """(model, name, paper, entry or None) for each row of a paper's table, in its order;
    adds the results files shown to `used`."""
    for (model, name), paper in PAPER_RESULTS.items():
        if paper["paper"] != paper_key:
            continue
        entry = results.get((model, name))
        if entry is not None:
            used.add((model, name))
        else:
            entry = pooled_entry(results, model, name)
            if entry is not None:
                used.update(entry["keys"])
        yield model, name, paper, entry


def render_summary(results_dir: Path) -> str:
    """The README's results table: the headline row of each paper experiment that has results
    of ours (`SUMMARY_ROWS`), with the same statistics and provenance labels as
    `results/README.md`, which has every row and the reasons."""
    results, _, _ = read_results_dir(Path(results_dir))
    lines = [SUMMARY_START,
             f"<!-- Generated by `{GENERATOR}` from results/: do not edit by hand. -->",
             "| paper | model | split | paper (test %) | ours: mean ± std | median | min–max "
             "| n | provenance |", "|---|---|---|---|---|---|---|---|---|"]
    for model, name in SUMMARY_ROWS:
        paper = PAPER_RESULTS[(model, name)]
        entry = results.get((model, name))
        if entry is None:
            continue
        cells = [SHORT_TITLES[paper["paper"]], model,
                 f"[{name}](results/{entry['path']})", paper_cell(paper),
                 *our_cells(entry)[:4], provenance_cell(entry, with_reason=False)]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append(SUMMARY_END)
    return "\n".join(lines)


DOC_TABLE = re.compile(r"<!-- results-table: ([^>]*?) -->\n.*?<!-- results-table:end -->",
                       re.DOTALL)


def render_doc_tables(text: str, results_dir: Path) -> str:
    """`text` (a page of docs/) with each `<!-- results-table: MODEL/NAME ... -->` ...
    `<!-- results-table:end -->` block regenerated from those results files: every seed's test
    score and the statistics and provenance label of the tables above, so that a page's
    figures cannot drift from the files."""
    results, _, _ = read_results_dir(Path(results_dir))

    def table(match):
        keys = match.group(1).split()
        named = [results.get((key.partition("/")[0], key.partition("/")[2])) for key in keys]
        # A table of several models names each row's model too.
        several_models = len({key.partition("/")[0] for key in keys}) > 1
        translation = all(entry is not None and is_translation(entry) for entry in named)
        lines = [match.group(0).split("\n", 1)[0],
                 "| results file | test BLEU per seed | BLEU, authors' way, per seed | daxy "
                 "x/8 per seed | n | provenance |" if translation else
                 "| results file | test exact match per seed (%) | mean ± std | median "
                 "| min–max | n | provenance |",
                 "|---|---|---|---|---|---|" if translation else "|---|---|---|---|---|---|---|"]
        for key in keys:
            model, _, name = key.partition("/")
            entry = results.get((model, name)) or pooled_entry(results, model, name)
            if entry is None:
                raise ReportError(f"a results table names {key}, which has no results file")
            label = f"{model} / {name}" if translation or several_models else name
            link = f"[{label}](../results/{entry['path']})" if "path" in entry else label
            runs = sorted(entry["runs"], key=lambda r: r["seed"])
            if translation:
                cells = [" / ".join(f"{run[field]:.2f}" for run in runs)
                         for field in ("test_bleu", "test_bleu_authors")]
                cells += [" / ".join(f"{run['daxy_exact']}/8" for run in runs), str(len(runs))]
            else:
                cells = [" / ".join(_percent(run["test_accuracy"]) for run in runs),
                         *our_cells(entry)[:4]]
            lines.append("| " + " | ".join([link, *cells,
                                             provenance_cell(entry, with_reason=False)]) + " |")
        return "\n".join(lines + ["<!-- results-table:end -->"])

    return DOC_TABLE.sub(table, text)


def with_summary(readme_text: str, summary: str) -> str:
    """`readme_text` with the block between the summary markers replaced by `summary`."""
    start, end = readme_text.find(SUMMARY_START), readme_text.find(SUMMARY_END)
    if start < 0 or end < start:
        raise ReportError(f"the README has no {SUMMARY_START} ... {SUMMARY_END} block")
    return readme_text[:start] + summary + readme_text[end + len(SUMMARY_END):]


def build_report(results_dir: Path, out: Path, runs_dir: Path, readme: Path | None = None
                 ) -> dict:
    """Writes the results README, its plots and (given `readme`) the summary block of the
    project README; returns {"readme": path, "plots": [paths]}."""
    out = Path(out)
    text, plots = render_report(results_dir, out, runs_dir)
    for path, draw in plots:
        if draw is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            draw()
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    plots_dir = out.parent / PLOTS
    if plots_dir.exists():  # drop plots of results that no longer exist
        for stale in sorted(set(plots_dir.glob("*.png")) - {path for path, _ in plots}):
            stale.unlink()
    if readme is not None:
        readme = Path(readme)
        readme.write_text(with_summary(readme.read_text(), render_summary(results_dir)))
        for page in documentation_pages(readme):
            page.write_text(render_doc_tables(page.read_text(), results_dir))
    return {"readme": out, "plots": [path for path, _ in plots]}


def documentation_pages(readme: Path) -> list[Path]:
    """The README's `docs/*.md` pages."""
    return sorted((Path(readme).parent / "docs").glob("*.md"))


def stale_reports(results_dir: Path, out: Path, runs_dir: Path, readme: Path | None = None
                  ) -> list[str]:
    """What regenerating would change (nothing drawn or written): the files whose text differs
    from what the committed results give, and plots that are missing."""
    out = Path(out)
    text, plots = render_report(results_dir, out, runs_dir)
    stale = []
    if not out.exists() or out.read_text() != text:
        stale.append(f"{out} differs from what `{GENERATOR}` writes")
    stale += [f"{path} is missing" for path, _ in plots if not path.exists()]
    if readme is not None:
        readme = Path(readme)
        current = readme.read_text()
        if with_summary(current, render_summary(results_dir)) != current:
            stale.append(f"{readme}: its results table differs from what `{GENERATOR}` writes")
        pages = documentation_pages(readme)
        for page in pages:
            if render_doc_tables(page.read_text(), results_dir) != page.read_text():
                stale.append(f"{page}: a results table differs from what `{GENERATOR}` writes")
        # Typed figures: each must come from a committed file or be a paper's figure.
        stale += [f"unbacked figure: {problem}" for problem in
                  check_documents([readme, *pages], results_dir)]
    return stale


def _paper_for(model: str, name: str) -> dict | None:
    paper = PAPER_RESULTS.get((model, name))
    if paper is None and "_rep" in name:
        paper = PAPER_RESULTS.get((model, name.rsplit("_rep", 1)[0]))
    return paper


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=GENERATOR, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results-dir", default=str(RESULTS_DIR),
                        help=f"results directory (default: {RESULTS_DIR})")
    parser.add_argument("--out", help="README to write (default: RESULTS_DIR/README.md)")
    parser.add_argument("--readme",
                        help="project README whose results table to regenerate (default: the "
                             "repository's README.md when RESULTS_DIR is the repository's)")
    parser.add_argument("--runs-dir", default=str(REPO_DIR / "runs"),
                        help="run directories, for training curves (default: the repo's runs/)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if regenerating would change a file")
    args = parser.parse_args(argv)
    results_dir = Path(args.results_dir)
    if not results_dir.is_dir():
        print(f"error: results directory {results_dir} does not exist", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else results_dir / "README.md"
    readme = Path(args.readme) if args.readme else (
        REPO_DIR / "README.md" if results_dir.resolve() == RESULTS_DIR.resolve() else None)
    try:
        if args.check:
            stale = stale_reports(results_dir, out, Path(args.runs_dir), readme)
            for line in stale:
                print(f"stale: {line}", file=sys.stderr)
            return 1 if stale else 0
        report = build_report(results_dir, out, Path(args.runs_dir), readme)
    except ReportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {report['readme']} and {len(report['plots'])} plot(s)"
          + (f", and the results table of {readme}" if readme else ""))
    return 0
