"""The library's package data, read with `importlib.resources`, wherever the package lives.

- `configs/<model>/<name>.json`: the committed experiment configurations
  (`compgen_tf.experiments.config`). In the repository `configs/` is the real, top-level
  directory and `compgen_tf/resources/configs` a relative symbolic link to it, so that a
  checkout on `PYTHONPATH`, an editable install and a built wheel (which holds copies of the
  files, `pyproject.toml`'s package data) all find the same files here.
- `papers.json`: the papers' published figures that the results report sets beside ours
  (`compgen_tf.reporting.papers`).
- `numerics_changes.json`: the commits that changed what a seed trains to, by model
  (`compgen_tf.experiments.staleness`).

Nothing is ever written here: runs, results and reports go where the user points
(`--output`, `--runs-dir`, `--results-dir`; by default under the current directory).

Example:
    >>> from compgen_tf import resources
    >>> (resources.path("configs") / "seq2seq" / "simple.json").is_file()
    True
"""

from __future__ import annotations

from importlib import resources as _resources
from pathlib import Path


def path(*parts: str) -> Path:
    """The file-system path of a resource of this package.

    Args:
        *parts: Path components below `compgen_tf/resources/`, e.g. `"configs", "seq2seq"`.

    Returns:
        The path, which need not exist.

    Raises:
        RuntimeError: when the package is not installed as files on disk (e.g. imported
            from a zip archive), where configurations could not be read as paths.

    Example:
        >>> path("papers.json").name
        'papers.json'
    """
    root = _resources.files(__name__)
    if not isinstance(root, Path):
        raise RuntimeError(f"compgen_tf's resources are not files on disk ({root!r}): install "
                           f"the package as a directory (pip install), not as a zip archive")
    return root.joinpath(*parts)
