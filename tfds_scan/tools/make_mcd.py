"""Regenerate ``tfds_scan/data/scan_mcd.npz`` from the published MCD files of SCAN.

The maximum-compound-divergence splits of Keysers et al. (2020) (TFDS ``scan/mcd1..3``) are
two lists of SCAN commands each, in an order of their own. Every line is one of the grammar's
20,910 commands, so this script stores each file as uint16 indices into
``grammar.all_commands()``, in file order, after checking every line against
``grammar.interpret`` (``make_orders.canonical_indices``) and that each split's train and
test share no command. ``splits.split_examples("scan_mcdN")`` turns them back into the
published lines (``tests/test_scan_mcd.py`` compares them, line for line).

Usage (from the repository root; ``--mcd-dir`` defaults to ``../shared/scan_mcd``)::

    python -m tfds_scan.tools.make_mcd [--mcd-dir DIR] [--output FILE]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from tfds_scan import grammar
from tfds_scan.splits import MCD_CONFIG_NAMES
from tfds_scan.tools.make_orders import canonical_indices, read_official_lines

# A maintainer's tool, run from the repository root (as make_orders).
DEFAULT_MCD_DIR = Path("..") / "shared" / "scan_mcd"
DEFAULT_OUTPUT = Path("tfds_scan") / "data" / "scan_mcd.npz"


def mcd_file(mcd_dir: Path, config_name: str, part: str) -> Path:
    """The published file of `part` ("train" or "test") of `config_name` ("scan_mcd1"...)."""
    return Path(mcd_dir) / f"tasks_{part}_mcd{config_name[len('scan_mcd'):]}.txt"


def build_arrays(mcd_dir: Path) -> dict[str, np.ndarray]:
    """Every array stored in ``scan_mcd.npz``.

    Args:
        mcd_dir: Directory with ``tasks_{train,test}_mcd{1,2,3}.txt``.

    Returns:
        ``scan_mcdN_train`` and ``scan_mcdN_test`` for N = 1, 2, 3, and ``canonical_sha256``.

    Raises:
        ValueError: For a line that is not a SCAN command with its official actions, or a
            command in both train and test of one split.
    """
    arrays = {}
    for name in MCD_CONFIG_NAMES:
        for part in ("train", "test"):
            path = mcd_file(mcd_dir, name, part)
            arrays[f"{name}_{part}"] = canonical_indices(read_official_lines(path), path)
        shared = set(arrays[f"{name}_train"].tolist()) & set(arrays[f"{name}_test"].tolist())
        if shared:
            raise ValueError(f"{name}: {len(shared)} commands are in both train and test")
    arrays["canonical_sha256"] = np.asarray(grammar.canonical_order_sha256())
    return arrays


def main(argv: list[str] | None = None) -> None:
    """Write ``scan_mcd.npz``.

    Args:
        argv: Command-line arguments (default: ``sys.argv[1:]``).
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mcd-dir", type=Path, default=DEFAULT_MCD_DIR)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    arrays = build_arrays(args.mcd_dir)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(args.output, **arrays)
    print(f"wrote {args.output} ({args.output.stat().st_size:,} bytes, {len(arrays)} arrays)")


if __name__ == "__main__":
    main()
