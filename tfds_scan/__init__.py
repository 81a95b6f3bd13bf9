"""SCAN (with its MCD splits), the small English-French set and COGS for TensorFlow Datasets,
fully offline, in official order and multiplicity.

Example:
    >>> import tfds_scan
    >>> train = tfds_scan.load("addprim_jump", "fit")          # tf.data.Dataset of dicts
    >>> pairs = tfds_scan.load_pairs("addprim_jump", "fit")     # same, as Python pairs
    >>> pairs == tfds_scan.load_examples("addprim_jump", "fit")  # generated without TFDS
    True
    >>> tfds_scan.interpret("jump twice")
    'I_JUMP I_JUMP'

A folder of your own TSV files is a dataset too (``tfds_scan.folder_pairs``):
``load_pairs("path/to/folder", "test")``, and ``load_categories`` gives the third column.
"""

from tfds_scan.grammar import all_commands, interpret
from tfds_scan.mt import CONFIG_NAMES as MT_CONFIG_NAMES
from tfds_scan.cogs import CONFIG_NAMES as COGS_CONFIG_NAMES
from tfds_scan.folder_pairs import FolderDataError, FolderPairs
from tfds_scan.loader import default_data_dir, load, load_categories, load_pairs
from tfds_scan.offline_cogs import OfflineCogs
from tfds_scan.offline_mt import OfflineMT
from tfds_scan.offline_scan import OfflineScan
from tfds_scan.toy_composition import ToyComposition
from tfds_scan.toy_palindromes import ToyPalindromes
from tfds_scan.toy_rule_learning import ToyRuleLearning
from tfds_scan.toy_loader import load_toy
from tfds_scan.splits import (
    CONFIG_NAMES,
    OFFICIAL_FILES,
    SPLIT_NAMES,
    VALIDATION_CARVES,
    load_examples,
    split_examples,
    split_line_indices,
)

__all__ = [
    "CONFIG_NAMES",
    "COGS_CONFIG_NAMES",
    "FolderDataError",
    "FolderPairs",
    "MT_CONFIG_NAMES",
    "OFFICIAL_FILES",
    "SPLIT_NAMES",
    "VALIDATION_CARVES",
    "OfflineCogs",
    "OfflineMT",
    "OfflineScan",
    "ToyComposition",
    "ToyPalindromes",
    "ToyRuleLearning",
    "all_commands",
    "default_data_dir",
    "interpret",
    "load",
    "load_categories",
    "load_examples",
    "load_pairs",
    "load_toy",
    "split_examples",
    "split_line_indices",
]
