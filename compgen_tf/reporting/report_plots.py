"""The report's plots: test accuracy per seed, and validation accuracy during training.

PNGs without metadata, so that drawing them again from the same results gives the same bytes.
"""

from __future__ import annotations

import statistics
from pathlib import Path

from compgen_tf.experiments.results import history_curve, validation_curve
from compgen_tf.reporting.plotting import pyplot


def _save(figure, path: Path):
    figure.tight_layout()
    figure.savefig(path, format="png", dpi=100, metadata={"Software": None})
    pyplot().close(figure)


def plot_seeds(entry: dict, paper: dict | None, path: Path):
    """Per-seed test accuracy: one dot per seed, our mean and median, the paper's numbers."""
    plt = pyplot()
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


def run_curves(entry: dict, name: str, runs_dir: Path) -> list:
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
    """Validation accuracy against step, one line per seed (`run_curves`)."""
    plt = pyplot()
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


def translation_curves(entry: dict, name: str, runs_dir: Path) -> list:
    """[(seed, [(step, validation BLEU)], [(step, training loss)])] of each seed of a
    translation results file whose BLEU curve is known (run directory, else results file)."""
    curves = []
    for run in sorted(entry["runs"], key=lambda r: r["seed"]):
        history = runs_dir / entry["model"] / name / f"seed{run['seed']}" / "history.jsonl"
        bleu = history_curve(history, "val_bleu") or run.get("validation_bleu_curve") or []
        loss = history_curve(history, "loss") or run.get("loss_curve") or []
        if bleu:
            curves.append((run["seed"], bleu, loss))
    return curves


def plot_translation_curves(curves: list, entry: dict, name: str, path: Path):
    """Validation BLEU and training loss against update, one line per seed, the kept
    model's step marked (`translation_curves`)."""
    plt = pyplot()
    figure, (bleu_axes, loss_axes) = plt.subplots(1, 2, figsize=(9.6, 3.6))
    best = {run["seed"]: run.get("best_step") for run in entry["runs"]}
    for seed, bleu, loss in curves:
        line, = bleu_axes.plot([s for s, _ in bleu], [b for _, b in bleu], linewidth=1.2,
                               label=f"seed {seed}")
        if best.get(seed) is not None:
            kept = [b for s, b in bleu if s == best[seed]]
            if kept:
                bleu_axes.scatter([best[seed]], kept[-1:], color=line.get_color(), zorder=3)
        if loss:
            loss_axes.plot([s for s, _ in loss], [v for _, v in loss], linewidth=1.2,
                           color=line.get_color(), label=f"seed {seed}")
    bleu_axes.set_xlabel("update")
    bleu_axes.set_ylabel("validation BLEU (dot: kept model)")
    loss_axes.set_xlabel("update")
    loss_axes.set_ylabel("training loss (logged)")
    figure.suptitle(f"{entry['model']} on {name}: validation BLEU and loss", fontsize=10)
    if len(curves) <= 10:
        bleu_axes.legend(fontsize=8)
    _save(figure, path)
