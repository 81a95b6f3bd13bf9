"""The cells of the report's tables: our statistics over seeds, a paper's figure, provenance.

Every table of `results/README.md`, of the project README and of the docs' results tables
formats its numbers here, so that one figure reads the same wherever it is shown.
"""

from __future__ import annotations

import statistics

from compgen_tf.experiments import knowledge, staleness
from compgen_tf.experiments.config import PROVENANCE_KINDS
from compgen_tf.experiments.results import summarize


def percent(fraction: float) -> str:
    """A fraction as a percentage with one decimal: 0.9125 -> "91.2"."""
    return f"{100.0 * fraction:.1f}"


def _paper_number(value: float) -> str:
    text = f"{value:.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def paper_cell(paper: dict) -> str:
    """A paper's figure (`compgen_tf.reporting.papers`): "78.4 ± 27.4 (median 91.0, n=25)"."""
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
    """`summarize` of a results entry's test accuracies, with its mean wall time per run."""
    accuracies = [run["test_accuracy"] for run in entry["runs"]]
    times = [run["wall_time_s"] for run in entry["runs"] if run.get("wall_time_s") is not None]
    return dict(summarize(accuracies), wall_time=statistics.fmean(times) if times else None)


def our_cells(entry: dict | None) -> list[str]:
    """mean ± std, median, min–max, n and wall time: the same statistics on every row."""
    if entry is None:
        return ["—"] * 5
    stats = our_stats(entry)
    spread = f" ± {percent(stats['std'])}" if stats["n"] > 1 else ""  # no std from one run
    return [f"{percent(stats['mean'])}{spread}", percent(stats["median"]),
            f"{percent(stats['min'])}–{percent(stats['max'])}",
            str(stats["n"]) + _backends_note(entry), _wall_time(stats["wall_time"])]


def _backends_note(entry: dict) -> str:
    """" (2 on JAX)" when some of a row's seeds trained on another backend than TensorFlow
    (their wall times are that backend's), else nothing."""
    counts = {}
    for run in entry["runs"]:
        if run.get("backend", "tensorflow") != "tensorflow":
            counts[run["backend"]] = counts.get(run["backend"], 0) + 1
    names = {"jax": "JAX"}
    return "".join(f" ({count} on {names.get(backend, backend)})"
                   for backend, count in sorted(counts.items()))


def provenance_cell(entry: dict | None, with_reason: bool = True, short: bool = False) -> str:
    """The row's marker (`PROVENANCE_KINDS`), and the one-line reason its file gives; `short`:
    the kind alone ("post-hoc"), for the README's narrow table."""
    if entry is None:
        return "—"
    provenance = entry["provenance"]
    if short:
        return provenance["kind"]
    label = PROVENANCE_KINDS[provenance["kind"]]
    return f"{label}: {provenance['reason']}" if with_reason else label


def knowledge_cell(entry: dict | None, short: bool = False) -> str:
    """The benchmark knowledge the row's recorded configuration encodes
    (`compgen_tf.experiments.knowledge`), or that it learns everything from the data."""
    if entry is None:
        return "—"
    return knowledge.knowledge_cell(entry["model"], entry.get("split"), entry.get("config"),
                                    short=short)


def split_cell(name: str, entry: dict | None) -> str:
    """The split's name, linked to its results file (or to each of the files pooled)."""
    if entry is None:
        return name
    if "pooled" in entry:
        return f"{name} (pooled: {', '.join(f'[{p}]({p})' for p in entry['pooled'])})"
    return f"[{name}]({entry['path']})"


def number_cells(values) -> list[str]:
    """mean ± std, median and min–max of plain numbers (BLEU), two decimals."""
    stats = summarize(values)
    spread = f" ± {stats['std']:.2f}" if stats["n"] > 1 else ""
    return [f"{stats['mean']:.2f}{spread}", f"{stats['median']:.2f}",
            f"{stats['min']:.2f}–{stats['max']:.2f}"]


def scalar(value) -> str:
    """A benchmark field as a table cell ("—" for none, `|` escaped)."""
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace("|", "\\|")


# The README's marks on the n of a row whose seeds' code is not today's (`code_cell`).
CODE_MARKS = {"current": "", "changed": " †", "unknown": " ?"}


def _seed_list(seeds) -> str:
    seeds = sorted(seeds)
    if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)):
        return f"{seeds[0]}–{seeds[-1]}"
    return ", ".join(str(seed) for seed in seeds)


def code_cell(entry: dict | None, short: bool = False) -> str:
    """Whether the row's seeds ran today's numerics (`compgen_tf.experiments.staleness`):
    "current", "changed since COMMITS (seeds ...)" or "unknown (...)"; `short`: the mark
    the README puts after n (`CODE_MARKS`)."""
    if entry is None:
        return "" if short else "—"
    state = staleness.results_state(entry)
    if short:
        return CODE_MARKS[state.state]
    if state.state == "current":
        return "current"
    if state.state == "changed":
        # Oldest first, each once (one commit may be listed for several models).
        commits = ", ".join(dict.fromkeys(change.commit[:7] for change in state.changes))
        return f"changed since {commits} (seeds {_seed_list(state.seeds_in('changed'))})"
    reasons = sorted({code.reason for code in state.seeds.values() if code.state == "unknown"})
    return f"unknown (seeds {_seed_list(state.seeds_in('unknown'))}: {'; '.join(reasons)})"
