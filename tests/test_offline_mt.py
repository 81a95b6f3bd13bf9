"""The English-French set: shipped files, the `offline_mt` builder and the loader."""

import hashlib
import re
import tempfile
from pathlib import Path

import pytest
import tensorflow_datasets as tfds

import tfds_scan
from tfds_scan import OfflineMT, mt

SHARED_MT = Path(__file__).resolve().parents[1].parent / "shared" / "mt"


class OfflineMTTest(tfds.testing.DatasetBuilderTestCase):
    DATASET_CLASS = OfflineMT
    BUILDER_CONFIG_NAMES_TO_TEST = ["mt_eng_fra_daxy"]
    SPLITS = {"train": 10_999, "test": 1_191, "daxy": 8}
    SKIP_CHECKSUMS = True
    # The daxy split is the first 8 test pairs, by design (the authors' two test files).
    OVERLAPPING_SPLITS = ["daxy"]
    # The builder downloads nothing, so the harness's fake-data directory stays empty.
    EXAMPLE_DIR = tempfile.mkdtemp()


def test_shipped_files_match_the_checksums_in_their_readme():
    readme = (mt.DATA_DIR / "README.md").read_text()
    recorded = dict((name, digest) for digest, name in
                    re.findall(r"^([0-9a-f]{64})  (\S+)$", readme, flags=re.M))
    assert set(recorded) == {"train.txt", "test.txt"}
    for name, digest in recorded.items():
        assert hashlib.sha256((mt.DATA_DIR / name).read_bytes()).hexdigest() == digest
    assert (mt.DATA_DIR / "LICENSE").read_text().startswith("MIT License")


@pytest.mark.skipif(not SHARED_MT.exists(), reason="../shared/mt is not available")
def test_configs_equal_the_authors_files():
    shared = {name: mt.read_pairs(SHARED_MT / f"{name}.txt")
              for name in ("train", "train_daxy", "test", "test_daxy")}
    english = mt.mt_examples("mt_eng_fra")
    assert english["train"] == shared["train"] and english["test"] == shared["test"]
    daxy = mt.mt_examples("mt_eng_fra_daxy")
    assert daxy["train"] == shared["train_daxy"] and daxy["daxy"] == shared["test_daxy"]


def test_sizes_directions_and_daxy_sentences():
    english = mt.mt_examples("mt_eng_fra_daxy")
    french = mt.mt_examples("mt_fra_eng_daxy")
    assert {k: len(v) for k, v in english.items()} == {"train": 10_999, "test": 1_191,
                                                        "daxy": 8}
    assert len(mt.mt_examples("mt_eng_fra")["train"]) == 9_999
    assert french["test"] == [(t, s) for s, t in english["test"]]
    assert english["train"][-1] == ("i am daxy .", "je suis daxiste .")
    assert all("daxy" in s for s, _ in english["daxy"])
    assert not any("daxy" in s for s, _ in mt.mt_examples("mt_eng_fra")["train"])


def test_loader_reads_the_builder_with_the_scan_validation_carve(tmp_path):
    carve = dict(validation_fraction=0.2, validation_seed=3)
    for split in ("fit", "validation", "daxy"):
        through_tfds = tfds_scan.load_pairs("mt_fra_eng", split, data_dir=tmp_path, **carve)
        assert through_tfds == mt.load_mt_examples("mt_fra_eng", split, **carve)
    fit = mt.load_mt_examples("mt_fra_eng", "fit", **carve)
    validation = mt.load_mt_examples("mt_fra_eng", "validation", **carve)
    assert len(validation) == round(0.2 * 9_999) and len(fit) + len(validation) == 9_999
    assert sorted(fit + validation) == sorted(mt.mt_examples("mt_fra_eng")["train"])


def test_bad_names_are_refused():
    with pytest.raises(ValueError, match="unknown translation config 'mt_deu'"):
        mt.mt_examples("mt_deu")
    with pytest.raises(ValueError, match="Unknown split 'dev'"):
        tfds_scan.load("mt_eng_fra", "dev")
    with pytest.raises(ValueError, match="Unknown split 'dev'"):
        mt.load_mt_examples("mt_eng_fra", "dev")
