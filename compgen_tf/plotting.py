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
