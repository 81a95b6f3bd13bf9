"""COGS: the shipped files, the `offline_cogs` builder, the loader and `load_categories`."""

import hashlib
import lzma
import os
import re
from collections import Counter
from pathlib import Path

import pytest

import tfds_scan
from tfds_scan import cogs

# The shared copies the shipped files were made from (a checkout's ../shared; or where
# COMPGEN_TF_SHARED points, for a worktree that has it elsewhere).
SHARED = Path(os.environ.get("COMPGEN_TF_SHARED",
                             Path(__file__).resolve().parents[1].parent / "shared"))
SHARED_COGS = SHARED / "cogs"
SIZES = {"train": 24_155, "dev": 3_000, "test": 3_000, "gen": 21_000}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """One TFDS build of `offline_cogs/cogs` for the whole module (about 50,000 lines)."""
    path = tmp_path_factory.mktemp("tfds")
    tfds_scan.load("cogs", "train", data_dir=path)
    return path


def _readme_digests():
    readme = (cogs.DATA_DIR / "README.md").read_text()
    return dict((name, digest) for digest, name in
                re.findall(r"^([0-9a-f]{64})  (\S+)$", readme, flags=re.M))


def test_shipped_files_decompress_to_the_checksums_in_their_readme():
    recorded = _readme_digests()
    assert set(recorded) == {f"{split}.tsv" for split in cogs.SPLITS}
    for name, digest in recorded.items():
        data = lzma.decompress((cogs.DATA_DIR / f"{name}.xz").read_bytes())
        assert hashlib.sha256(data).hexdigest() == digest, name
    for license_file in ("LICENSE", "LICENSE.gen"):
        assert (cogs.DATA_DIR / license_file).read_text().startswith("MIT License")


@pytest.mark.skipif(not SHARED_COGS.exists(), reason="../shared/cogs is not available")
def test_shipped_files_equal_the_shared_copies():
    for split in cogs.SPLITS:
        shipped = lzma.decompress((cogs.DATA_DIR / f"{split}.tsv.xz").read_bytes())
        shared = (SHARED_COGS / f"{split}.tsv").read_bytes()
        assert len(shipped) == len(shared), split
        assert hashlib.sha256(shipped).digest() == hashlib.sha256(shared).digest(), split
    assert _readme_digests() == {
        f"{split}.tsv": hashlib.sha256((SHARED_COGS / f"{split}.tsv").read_bytes()).hexdigest()
        for split in cogs.SPLITS}


def test_splits_sizes_and_categories():
    examples = cogs.cogs_examples("cogs")
    assert {split: len(triples) for split, triples in examples.items()} == SIZES
    gen = Counter(category for _, _, category in examples["gen"])
    assert len(gen) == 21 and set(gen.values()) == {1_000}
    assert set(cogs.STRUCTURAL_CATEGORIES) < set(gen)
    assert {cogs.category_group(c) for c in gen} == {"lexical", "structural"}
    assert sum(cogs.category_group(c) == "structural" for c in gen) == 3
    assert {cogs.category_group(c) for _, _, c in examples["train"]} == {"in_distribution"}
    assert {c for _, _, c in examples["test"]} == {"in_distribution"}


def test_builder_round_trip_and_the_library_parts(data_dir):
    builder = tfds_scan.OfflineCogs(config="cogs", data_dir=os.fspath(data_dir))
    assert {split: info.num_examples for split, info in builder.info.splits.items()} == SIZES
    assert set(builder.info.features) == {"source", "target", "category"}
    examples = cogs.cogs_examples("cogs")
    for split in cogs.SPLITS:
        assert tfds_scan.load_pairs("cogs", split, data_dir=data_dir) == [
            (s, t) for s, t, _ in examples[split]]
        assert tfds_scan.load_categories("cogs", split, data_dir=data_dir) == tuple(
            c for _, _, c in examples[split])
    # Validation is the official dev set, whatever the carve arguments; fit is all of train.
    carve = dict(validation_fraction=0.3, validation_seed=5, validation_carve="tail")
    assert (tfds_scan.load_pairs("cogs", "validation", data_dir=data_dir, **carve)
            == tfds_scan.load_pairs("cogs", "dev", data_dir=data_dir))
    assert (tfds_scan.load_pairs("cogs", "fit", data_dir=data_dir, **carve)
            == tfds_scan.load_pairs("cogs", "train", data_dir=data_dir))
    assert tfds_scan.load_categories("cogs", "validation", data_dir=data_dir) == tuple(
        c for _, _, c in examples["dev"])
    assert cogs.load_cogs_triples("cogs", "validation") == examples["dev"]


def test_categories_are_none_without_categories_and_names_are_checked(data_dir):
    assert tfds_scan.load_categories("simple", "test", data_dir=data_dir) is None
    assert tfds_scan.load_categories("mt_eng_fra", "daxy", data_dir=data_dir) is None
    with pytest.raises(ValueError, match="Unknown split 'daxy'"):
        tfds_scan.load_categories("cogs", "daxy", data_dir=data_dir)
    with pytest.raises(ValueError, match="Unknown split 'gen'"):
        tfds_scan.load_pairs("simple", "gen", data_dir=data_dir)
    with pytest.raises(ValueError, match="validation_fraction"):
        tfds_scan.load_pairs("cogs", "gen", validation_fraction=2.0, data_dir=data_dir)


def test_a_bad_line_names_its_file_and_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("a b .\tA ( x _ 1 )\tin_distribution\nno tabs here\n")
    with pytest.raises(ValueError, match=r"bad.tsv:2: expected 3 tab-separated fields"):
        cogs.read_triples(path)


def test_the_wheel_ships_the_files():
    import tomllib

    settings = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml")
                             .read_text())["tool"]["setuptools"]["package-data"]["tfds_scan"]
    package = cogs.DATA_DIR.parents[1]
    shipped = {path.relative_to(package).as_posix() for pattern in settings
               for path in package.glob(pattern) if path.is_file()}
    assert {f"data/cogs/{split}.tsv.xz" for split in cogs.SPLITS} <= shipped
    assert {"data/cogs/LICENSE", "data/cogs/LICENSE.gen", "data/cogs/README.md",
            "data/scan_mcd.npz"} <= shipped
