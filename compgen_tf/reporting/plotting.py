"""Matplotlib without a display, shared by the plotting commands."""

from __future__ import annotations

from pathlib import Path


def pyplot():
    """`matplotlib.pyplot` on the Agg backend (no display needed; imported on first use)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, path) -> Path:
    """Writes `figure` as a PNG to `path` (creating its folder), closes it, returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    pyplot().close(figure)
    return path


def draw_heatmap(figure, axes, weights, columns, rows, xlabel: str, ylabel: str, title: str,
                 fontsize: int = 9):
    """Attention weights (rows x columns, in [0, 1]) as a labelled heat map with a colour bar."""
    image = axes.imshow(weights, cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
    axes.set_xticks(range(len(columns)), columns, rotation=45, ha="right", fontsize=fontsize)
    axes.set_yticks(range(len(rows)), rows, fontsize=fontsize)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=fontsize + 1)
    figure.colorbar(image, ax=axes, fraction=0.05)
