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

from tfds_scan import cogs, folder_pairs, mt, splits
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
    cost no read of their own. `name` may be a data folder (`tfds_scan.folder_pairs`).
    """
    if folder_pairs.is_folder(name):
        return [(source, target) for source, target, _ in _folder_rows(
            name, split, validation_fraction=validation_fraction,
            validation_seed=validation_seed, validation_carve=validation_carve,
            data_dir=data_dir)]
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
            ``tfds_scan.mt.CONFIG_NAMES``, e.g. ``"mt_eng_fra"``, or ``"cogs"``, or a data
            folder (``tfds_scan.folder_pairs``: its splits are ``FOLDER_SPLITS``, its
            features ``{"source", "target", "category"}``).
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
        ValueError: For an unknown config or split, or a bad validation_fraction or carve;
            a data folder's bad file is a ``folder_pairs.FolderDataError``.

    Example:
        >>> ds = load("simple", "fit", data_dir="/tmp/tfds")
        >>> next(iter(ds))["commands"].numpy()
        b'jump opposite right twice and turn opposite right thrice'
    """
    if folder_pairs.is_folder(name):
        return _load_folder(name, split, validation_fraction=validation_fraction,
                            validation_seed=validation_seed,
                            validation_carve=validation_carve, data_dir=data_dir)
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
    return _carved_dataset(dataset, builder.info.splits["train"].num_examples, split,
                           validation_fraction=validation_fraction,
                           validation_seed=validation_seed, validation_carve=validation_carve)


def _carved_dataset(dataset, num_train_lines, split, **carve):
    """The lines of `dataset` (a train split) that `split` ("fit" or "validation") keeps,
    in order; `carve`: the `validation_*` arguments of `splits.split_line_indices`."""
    kept_lines = splits.split_line_indices(
        num_train_lines,
        split,
        **carve,
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
        ``category`` feature; a data folder: its third column, "" on a line without one), or
        None for the SCAN and MT configs, which have no categories, and for a data folder's
        split none of whose lines has one.

    Raises:
        ValueError: For an unknown config or split, or a bad validation_fraction or carve;
            a data folder's bad file is a ``folder_pairs.FolderDataError``.

    Example:
        >>> load_categories("cogs", "gen")[0]
        'prim_to_subj_proper'
        >>> load_categories("simple", "test") is None
        True
    """
    if folder_pairs.is_folder(name):
        return _folder_categories(name, split, validation_fraction=validation_fraction,
                                  validation_seed=validation_seed,
                                  validation_carve=validation_carve, data_dir=data_dir)
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


def _folder_categories(folder, split, **options) -> tuple[str, ...] | None:
    """`load_categories` of a data folder: its rows' third column, None if all empty."""
    categories = tuple(category for _, _, category in _folder_rows(folder, split, **options))
    return categories if any(categories) else None


def _folder_request(folder, split, validation_fraction, validation_carve):
    """(the folder's content SHA-256, the file split, the part of it kept or None)."""
    splits.check_validation_fraction(validation_fraction)
    splits.check_validation_carve(validation_carve)
    sha256 = folder_pairs.content_sha256(folder)
    file_split, part = folder_pairs.source_split(folder_pairs.split_files(folder), split,
                                                 folder)
    return sha256, file_split, part


def _folder_rows(folder, split, *, validation_fraction, validation_seed, validation_carve,
                 data_dir) -> list[tuple[str, str, str]]:
    """(source, target, category) rows of `split` of a data folder, through its builder."""
    sha256, file_split, part = _folder_request(folder, split, validation_fraction,
                                               validation_carve)
    data_dir = os.fspath(Path(data_dir if data_dir else default_data_dir()).resolve())
    rows = _folder_file_rows(os.fspath(Path(folder).resolve()), sha256, file_split, data_dir)
    if part is None:
        return list(rows)
    return splits.carved(rows, part, validation_fraction=validation_fraction,
                         validation_seed=validation_seed, validation_carve=validation_carve)


@functools.lru_cache(maxsize=16)
def _folder_file_rows(folder: str, sha256: str, split: str,
                      data_dir: str) -> tuple[tuple[str, str, str], ...]:
    """One file split of a folder's build, read once per contents (keyed by `sha256`)."""
    rows = []
    dataset = _folder_builder(folder, sha256, data_dir).as_dataset(
        split=split, shuffle_files=False, read_config=tfds.ReadConfig(interleave_cycle_length=1))
    for batch in dataset.batch(8192).as_numpy_iterator():
        rows.extend(zip(*([text.decode() for text in batch[key]]
                          for key in ("source", "target", "category"))))
    return tuple(rows)


def _folder_builder(folder, sha256: str, data_dir) -> folder_pairs.FolderPairs:
    """The prepared `FolderPairs` builder of `folder` (contents `sha256`) in `data_dir`."""
    def make_builder():
        return folder_pairs.FolderPairs(folder=folder, sha256=sha256,
                                        data_dir=os.fspath(data_dir))

    if not make_builder().is_prepared():
        # A bad file is its one line before TFDS starts a build (and leaves a directory).
        folder_pairs.read_folder(folder)
    return build_once(make_builder, Path(data_dir))


def _load_folder(folder, split, *, validation_fraction, validation_seed, validation_carve,
                 data_dir) -> tf.data.Dataset:
    """`load` of a data folder: a file split, or the fit / validation carve of train."""
    sha256, file_split, part = _folder_request(folder, split, validation_fraction,
                                               validation_carve)
    builder = _folder_builder(folder, sha256, data_dir if data_dir else default_data_dir())
    dataset = builder.as_dataset(split=file_split, shuffle_files=False,
                                 read_config=tfds.ReadConfig(interleave_cycle_length=1))
    if part is None:
        return dataset
    return _carved_dataset(dataset, builder.info.splits["train"].num_examples, part,
                           validation_fraction=validation_fraction,
                           validation_seed=validation_seed, validation_carve=validation_carve)
