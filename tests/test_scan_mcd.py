"""SCAN's maximum-compound-divergence splits: shipped indices, published lines, the builder."""

import os
from pathlib import Path

import numpy as np
import pytest

import tfds_scan
from tfds_scan import splits
from tfds_scan.tools import make_mcd

SHARED = Path(os.environ.get("COMPGEN_TF_SHARED",
                             Path(__file__).resolve().parents[1].parent / "shared"))
MCD_DIR = SHARED / "scan_mcd"


@pytest.mark.skipif(not MCD_DIR.exists(), reason="../shared/scan_mcd is not available")
@pytest.mark.parametrize("name", splits.MCD_CONFIG_NAMES)
def test_regenerated_lines_equal_the_published_files(name):
    examples = splits.split_examples(name)
    for part in ("train", "test"):
        published = make_mcd.mcd_file(MCD_DIR, name, part).read_text(encoding="utf-8")
        assert "".join(f"IN: {c} OUT: {a}\n" for c, a in examples[part]) == published


@pytest.mark.skipif(not MCD_DIR.exists(), reason="../shared/scan_mcd is not available")
def test_the_tool_rebuilds_the_shipped_arrays(tmp_path):
    output = tmp_path / "scan_mcd.npz"
    make_mcd.main(["--mcd-dir", os.fspath(MCD_DIR), "--output", os.fspath(output)])
    shipped = Path(splits.__file__).parent / "data" / "scan_mcd.npz"
    with np.load(output) as rebuilt, np.load(shipped) as committed:
        assert sorted(rebuilt.files) == sorted(committed.files)
        for key in committed.files:
            np.testing.assert_array_equal(rebuilt[key], committed[key])


def test_sizes_disjointness_and_the_validation_carve(tmp_path):
    for name in splits.MCD_CONFIG_NAMES:
        examples = splits.split_examples(name)
        assert (len(examples["train"]), len(examples["test"])) == (8_365, 1_045)
        assert not {c for c, _ in examples["train"]} & {c for c, _ in examples["test"]}
    carve = dict(validation_fraction=0.1, validation_seed=2)
    fit = tfds_scan.load_pairs("scan_mcd1", "fit", data_dir=tmp_path, **carve)
    validation = tfds_scan.load_pairs("scan_mcd1", "validation", data_dir=tmp_path, **carve)
    assert fit == splits.load_examples("scan_mcd1", "fit", **carve)
    assert validation == splits.load_examples("scan_mcd1", "validation", **carve)
    assert len(validation) == 836 and len(fit) + len(validation) == 8_365
    assert tfds_scan.load_pairs("scan_mcd1", "test", data_dir=tmp_path) == (
        splits.split_examples("scan_mcd1")["test"])
    assert tfds_scan.load_categories("scan_mcd1", "test", data_dir=tmp_path) is None
