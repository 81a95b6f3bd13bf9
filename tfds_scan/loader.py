"""``load``: one split of SCAN, of the MT set or of COGS as a ``tf.data.Dataset``, built offline
through TFDS; ``load_pairs`` and ``load_categories``: the same as Python values."""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
from pathlib import Path

import tensorflow as tf
import tensorflow_datasets as tfds

from tfds_scan import cogs, mt, splits
from tfds_scan.offline_cogs import OfflineCogs
from tfds_scan.offline_mt import OfflineMT
from tfds_scan.offline_scan import OfflineScan

DATA_DIR_ENV_VAR = "COMPGEN_TF_DATA_DIR"


def default_data_dir() -> Path:
    """Return where ``load`` builds datasets when no ``data_dir`` is given.

    Returns:
        ``$COMPGEN_TF_DATA_DIR`` if set and non-empty, else
        ``~/.cache/compgen_tf/tensorflow_datasets``.

    Example:
        >>> default_data_dir().name
        'tensorflow_datasets'
    """
    configured = os.environ.get(DATA_DIR_ENV_VAR)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "compgen_tf" / "tensorflow_datasets"


@contextlib.contextmanager
def _build_lock(data_dir: Path):
    """An exclusive lock on ``data_dir`` across processes, held while a dataset is built."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / ".offline_scan.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def build_once(make_builder, data_dir: Path):
    """`make_builder()`, prepared: built under a lock on `data_dir` unless it already is.

    Several processes (parallel seeds, distributed workers, test workers) may ask for the
    same config at once: one builds it, the others then find it built (a builder reads what
    exists when it is created, so it is created again under the lock). A built (possibly
    read-only) data_dir is only read.
    """
    builder = make_builder()
    if not builder.is_prepared():
        with _build_lock(Path(data_dir)):
            builder = make_builder()
            builder.download_and_prepare()
    return builder


def load_pairs(
    name: str,
    split: str = "train",
    *,
    validation_fraction: float = 0.1,
    validation_seed: int = 0,
    validation_carve: str = "random",
    data_dir: str | os.PathLike | None = None,
) -> list[tuple[str, str]]:
    """``load`` as a list of ``(command, actions)`` (SCAN) or ``(source, target)`` (MT)
    string pairs, in the same order; the arguments are ``load``'s.

    Equal to ``load_examples`` / ``mt.load_mt_examples`` (which make the same pairs without
    TFDS files); the training tools read their data through this, i.e. through the TFDS
    builders. Each official split is read once per process and data directory (a built
    split does not change): a run asks for train, fit, validation and test, and ``fit`` and
    ``validation`` are the train lines that ``splits.split_line_indices`` names, so they
    cost no read of their own.
    """
    official = _checked_official_splits(name, split, validation_fraction, validation_carve)
    data_dir = os.fspath(Path(data_dir if data_dir else default_data_dir()).resolve())
    if name in cogs.CONFIG_NAMES:  # validation is the official dev set, fit all of train
        return list(_official_pairs(name, cogs.PART_SPLITS[split], data_dir))
    if split in official:
        return list(_official_pairs(name, split, data_dir))
    return splits.carved(_official_pairs(name, "train", data_dir), split,
                         validation_fraction=validation_fraction,
                         validation_seed=validation_seed, validation_carve=validation_carve)


def _checked_official_splits(name, split, validation_fraction, validation_carve):
    """The official splits of config `name`, once `load`'s arguments are checked."""
    if name in mt.CONFIG_NAMES:
        mt.check_split_name(split)
        official = mt.SPLITS
    elif name in cogs.CONFIG_NAMES:
        cogs.check_split_name(split)
        official = cogs.SPLITS
    else:
        splits.check_config_name(name)
        splits.check_split_name(split)
        official = ("train", "test")
    splits.check_validation_fraction(validation_fraction)
    splits.check_validation_carve(validation_carve)
    return official


@functools.lru_cache(maxsize=16)
def _official_pairs(name: str, split: str, data_dir: str) -> tuple[tuple[str, str], ...]:
    source, target = (("commands", "actions") if name in splits.CONFIG_NAMES
                      else ("source", "target"))
    pairs = []
    # In batches: one Python step per example costs seconds on a 20,000-line split.
    for batch in load(name, split, data_dir=data_dir).batch(8192).as_numpy_iterator():
        pairs.extend(zip([text.decode() for text in batch[source]],
                         [text.decode() for text in batch[target]]))
    return tuple(pairs)


def load(
    name: str,
    split: str = "train",
    *,
    validation_fraction: float = 0.1,
    validation_seed: int = 0,
    validation_carve: str = "random",
    data_dir: str | os.PathLike | None = None,
) -> tf.data.Dataset:
    """Load one split of a SCAN, MT or COGS config, in official order and multiplicity.

    Builds the ``offline_scan/<name>`` (or ``offline_mt/<name>``, ``offline_cogs/<name>``)
    TFDS dataset into ``data_dir`` on first use (no download), then reads it unshuffled.

    Args:
        name: One of ``tfds_scan.CONFIG_NAMES``, e.g. ``"addprim_jump"``, or of
            ``tfds_scan.mt.CONFIG_NAMES``, e.g. ``"mt_eng_fra"``, or ``"cogs"``.
        split: ``"train"`` or ``"test"`` (official; the MT configs also have ``"daxy"``),
            ``"validation"`` (a seeded subset of train lines) or ``"fit"`` (train minus
            validation). COGS has ``"train"``, ``"dev"``, ``"test"`` and ``"gen"``; its
            ``"validation"`` is ``"dev"`` and its ``"fit"`` is ``"train"``.
        validation_fraction: Share of train lines held out as validation, in (0, 1).
        validation_seed: Seed of the validation carve.
        validation_carve: ``"random"`` or ``"tail"`` (see ``splits.split_line_indices``).
        data_dir: TFDS data directory; default ``default_data_dir()``.

    Returns:
        A dataset of ``{"commands": tf.string, "actions": tf.string}`` scalars (MT:
        ``{"source", "target"}``; COGS: ``{"source", "target", "category"}``), equal to
        ``load_examples(name, split, ...)`` (MT: ``mt.load_mt_examples``; COGS:
        ``cogs.load_cogs_triples``).

    Raises:
        ValueError: For an unknown config or split, or a bad validation_fraction or carve.

    Example:
        >>> ds = load("simple", "fit", data_dir="/tmp/tfds")
        >>> next(iter(ds))["commands"].numpy()
        b'jump opposite right twice and turn opposite right thrice'
    """
    official = _checked_official_splits(name, split, validation_fraction, validation_carve)
    builder_class = (OfflineMT if name in mt.CONFIG_NAMES else
                     OfflineCogs if name in cogs.CONFIG_NAMES else OfflineScan)
    if name in cogs.CONFIG_NAMES:  # validation is the official dev set, fit all of train
        split = cogs.PART_SPLITS[split]
    data_dir = Path(data_dir if data_dir else default_data_dir())
    builder = build_once(lambda: builder_class(config=name, data_dir=os.fspath(data_dir)),
                         data_dir)
    # One file at a time, in file order: the official order is part of the contract.
    read_config = tfds.ReadConfig(interleave_cycle_length=1)
    source_split = split if split in official else "train"
    dataset = builder.as_dataset(
        split=source_split, shuffle_files=False, read_config=read_config
    )
    if split in official:
        return dataset
    num_train_lines = builder.info.splits["train"].num_examples
    kept_lines = splits.split_line_indices(
        num_train_lines,
        split,
        validation_fraction=validation_fraction,
        validation_seed=validation_seed,
        validation_carve=validation_carve,
    )
    is_kept = [False] * num_train_lines
    for line in kept_lines:
        is_kept[line] = True
    keep_mask = tf.constant(is_kept, dtype=tf.bool)
    return (
        dataset.enumerate()
        .filter(lambda line, example: keep_mask[line])
        .map(lambda line, example: example)
    )


def load_categories(
    name: str,
    split: str = "train",
    *,
    validation_fraction: float = 0.1,
    validation_seed: int = 0,
    validation_carve: str = "random",
    data_dir: str | os.PathLike | None = None,
) -> tuple[str, ...] | None:
    """The category of each pair of ``load_pairs(name, split, ...)``, or None when the
    dataset has none.

    Args:
        name, split, validation_fraction, validation_seed, validation_carve, data_dir:
            ``load_pairs``'s arguments (checked as there).

    Returns:
        A tuple of category strings aligned with ``load_pairs``'s list (COGS: each line's
        ``category`` feature), or None for the SCAN and MT configs, which have no categories.

    Raises:
        ValueError: For an unknown config or split, or a bad validation_fraction or carve.

    Example:
        >>> load_categories("cogs", "gen")[0]
        'prim_to_subj_proper'
        >>> load_categories("simple", "test") is None
        True
    """
    _checked_official_splits(name, split, validation_fraction, validation_carve)
    if name not in cogs.CONFIG_NAMES:
        return None
    data_dir = os.fspath(Path(data_dir if data_dir else default_data_dir()).resolve())
    return _official_categories(name, cogs.PART_SPLITS[split], data_dir)


@functools.lru_cache(maxsize=16)
def _official_categories(name: str, split: str, data_dir: str) -> tuple[str, ...]:
    categories = []
    for batch in load(name, split, data_dir=data_dir).batch(8192).as_numpy_iterator():
        categories.extend(text.decode() for text in batch["category"])
    return tuple(categories)
