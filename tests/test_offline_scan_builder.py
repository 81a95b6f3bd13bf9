"""The TFDS builder checked with TFDS's own test harness (`tfds.testing`)."""

import tempfile

import tensorflow_datasets as tfds

from tfds_scan import OfflineScan


class OfflineScanTest(tfds.testing.DatasetBuilderTestCase):
    DATASET_CLASS = OfflineScan
    # Every config holds all 20,910 commands; simple_p1 is as cheap as any.
    BUILDER_CONFIG_NAMES_TO_TEST = ["simple_p1"]
    SPLITS = {"train": 209, "test": 20701}
    SKIP_CHECKSUMS = True
    # The builder downloads nothing, so the harness's fake-data directory stays empty.
    EXAMPLE_DIR = tempfile.mkdtemp()
