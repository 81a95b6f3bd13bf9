"""Your own data: a folder of TSV files read through a TFDS builder (`FolderPairs`).

A data folder holds `train.tsv` and any of `dev.tsv`, `test.tsv`, `gen.tsv`. Each line is
`source<TAB>target` or `source<TAB>target<TAB>category` (every line of one file has the same
number of columns), UTF-8, no empty lines; source and target are space-separated tokens
(runs of whitespace count as one space). Any other `*.tsv` file in the folder is refused (a
misnamed split, `valid.tsv` or `Test.tsv`, would otherwise be left out without a word);
other files (a README, a license) are ignored. A bad file is a `FolderDataError` whose one
line names the file and the line number.

Which value is a folder (`is_folder`): a path object, or a string that contains a path
separator, or one that names an existing directory and no built-in config. So `data/cogs`,
`./mine` and `/tmp/x` are folders, and `simple` stays SCAN's split even beside a directory
of that name.

Caching and versioning are TFDS's, as for the built-in sets: the dataset is built once into
the data directory (`tfds_scan.default_data_dir()`) as `folder_pairs/<config>/<version>`,
where the config name is `sha256_` and the first 24 hex digits of the SHA-256 of the split
files' names and bytes (`content_sha256`). The key is the contents, not the path: a folder
that changes (one byte of one file) is a new config, built on first use; an unchanged folder,
wherever it lies, is read from the one already built. The content goes in the config name
rather than in the version because a TFDS version is the builder's (semantic, of the
code: `VERSION` changes when the way files are read does), and because many folders live
side by side in one data directory, one config each. Configs of contents that no longer
exist stay in the data directory until it is cleared.

Example:
    >>> builder = FolderPairs(folder="my_data", data_dir="/tmp/tfds")
    >>> builder.download_and_prepare()
    >>> sorted(builder.info.splits)
    ['dev', 'test', 'train']
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import tensorflow_datasets as tfds
from absl import logging as absl_logging

from tfds_scan import cogs, mt, splits
from tfds_scan.local_code_path import LocalCodePath

SPLIT_FILES = {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv", "gen": "gen.tsv"}
"""The files of a data folder, by the split each one is (only `train.tsv` is required)."""

FOLDER_SPLITS = ("train", "validation", "fit", "test", "gen", "dev")
"""The splits a folder can be asked for: `train`, `dev`, `test`, `gen` (their files) and
`validation` (`dev.tsv`, else a seeded carve of train) and `fit` (the rest of train: all of
it when there is a `dev.tsv`)."""


class FolderDataError(ValueError):
    """A data folder, or a line of one of its files, that cannot be read as pairs."""


def is_folder(name) -> bool:
    """Whether `name` names a data folder rather than a built-in config (the rule above).

    Args:
        name: what `tfds_scan.load` and `load_pairs` were given as a dataset.

    Returns:
        True for a path object, and for a string with a path separator or naming an
        existing directory that is not a built-in config name.

    Example:
        >>> is_folder("data/mine"), is_folder("simple")
        (True, False)
    """
    if isinstance(name, os.PathLike):
        return True
    if not isinstance(name, str) or not name:
        return False
    separators = [os.sep] + ([os.altsep] if os.altsep else [])
    if any(separator in name for separator in separators):
        return True
    return (name not in splits.CONFIG_NAMES and name not in mt.CONFIG_NAMES
            and name not in cogs.CONFIG_NAMES and os.path.isdir(name))


def split_files(folder) -> dict[str, Path]:
    """The split files present in `folder`, {split: path}, in `SPLIT_FILES` order.

    Args:
        folder: the data folder.

    Returns:
        {"train": path, and "dev", "test", "gen" where present}.

    Raises:
        FolderDataError: no such folder, no `train.tsv`, or another `*.tsv` file in it.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FolderDataError(f"data folder {folder} does not exist")
    known = set(SPLIT_FILES.values())
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() == ".tsv" and path.name not in known:
            raise FolderDataError(
                f"{path}: not a file of a data folder (its files: "
                f"{', '.join(SPLIT_FILES.values())}); rename or move it")
    if not (folder / SPLIT_FILES["train"]).is_file():
        raise FolderDataError(f"{folder / SPLIT_FILES['train']}: no such file (a data "
                              f"folder holds train.tsv and any of dev.tsv, test.tsv, gen.tsv)")
    return {split: folder / name for split, name in SPLIT_FILES.items()
            if (folder / name).is_file()}


def _digest(contents: dict[str, bytes]) -> str:
    """SHA-256 hex of the split files' names and bytes (each length-prefixed)."""
    digest = hashlib.sha256()
    for split, data in contents.items():
        for part in (SPLIT_FILES[split].encode(), data):
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
    return digest.hexdigest()


def content_sha256(folder) -> str:
    """The SHA-256 (hex) of a data folder's split files: their names and bytes.

    Args:
        folder: the data folder.

    Returns:
        64 hex digits; equal for two folders exactly when their split files are.

    Raises:
        FolderDataError: as `split_files`.
    """
    return _digest({split: path.read_bytes() for split, path in split_files(folder).items()})


def config_name(sha256: str) -> str:
    """The `FolderPairs` config of contents `sha256`: `sha256_` and its first 24 digits."""
    return f"sha256_{sha256[:24]}"


def parse_rows(path, data: bytes) -> list[tuple[str, str, str]]:
    """The (source, target, category) rows of one split file's bytes.

    Args:
        path: the file, named in errors.
        data: its bytes.

    Returns:
        One row a line, tokens joined by single spaces; category "" for a two-column file.

    Raises:
        FolderDataError: "PATH:LINE: what is wrong" (not UTF-8, an empty line, not 2 or 3
            tab-separated columns or not as many as line 1, an empty source or target), or
            "PATH: no lines".
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise FolderDataError(f"{path}:{line}: not UTF-8 (byte 0x{data[error.start]:02x})") \
            from None
    lines = text.removeprefix("\ufeff").split("\n")
    if lines[-1] == "":  # the newline that ends the last line
        lines.pop()
    if not lines:
        raise FolderDataError(f"{path}: no lines")
    rows, width = [], None
    for number, line in enumerate(lines, 1):
        line = line.removesuffix("\r")
        if not line.strip():
            raise FolderDataError(f"{path}:{number}: empty line")
        columns = line.split("\t")
        if len(columns) not in (2, 3):
            raise FolderDataError(f"{path}:{number}: {len(columns)} tab-separated column(s); "
                                  f"expected source<TAB>target[<TAB>category]")
        if width is not None and len(columns) != width:
            raise FolderDataError(f"{path}:{number}: {len(columns)} columns, but line 1 "
                                  f"has {width}")
        width = len(columns)
        source, target = (" ".join(column.split()) for column in columns[:2])
        for side, value in (("source", source), ("target", target)):
            if not value:
                raise FolderDataError(f"{path}:{number}: empty {side}")
        rows.append((source, target, columns[2].strip() if width == 3 else ""))
    return rows


def read_folder(folder) -> tuple[str, dict[str, list[tuple[str, str, str]]]]:
    """A data folder's contents, checked: (`content_sha256`, {split: rows}).

    Args:
        folder: the data folder.

    Returns:
        The SHA-256 of the bytes read and the rows of each split file (`parse_rows`).

    Raises:
        FolderDataError: for the folder or any line of its files.
    """
    contents = {split: path.read_bytes() for split, path in split_files(folder).items()}
    rows = {split: parse_rows(Path(folder) / SPLIT_FILES[split], data)
            for split, data in contents.items()}
    return _digest(contents), rows


def source_split(present, split: str, folder="") -> tuple[str, str | None]:
    """Where split `split` of a folder comes from: (its file's split, the part of it kept).

    Args:
        present: the folder's split files (`split_files`' keys).
        split: one of `FOLDER_SPLITS`.
        folder: the folder, named in errors.

    Returns:
        `(file split, None)` for all of that file; `("train", "fit" or "validation")` for a
        carve of train (`tfds_scan.splits.split_line_indices`).

    Raises:
        ValueError: for a split the folder does not have.
    """
    if split not in FOLDER_SPLITS:
        raise ValueError(f"Unknown split {split!r} of data folder {folder}; valid splits: "
                         f"{', '.join(FOLDER_SPLITS)}.")
    if split in ("validation", "fit"):
        if "dev" in present:
            return ("dev" if split == "validation" else "train"), None
        return "train", split
    if split not in present:
        available = [name for name in FOLDER_SPLITS
                     if name in present or name in ("validation", "fit")]
        raise ValueError(f"data folder {folder} has no {SPLIT_FILES[split]}; its splits: "
                         f"{', '.join(available)}.")
    return split, None


@contextlib.contextmanager
def _absl_errors_only():
    """absl's logging (TFDS's) at error level for the duration."""
    verbosity = absl_logging.get_verbosity()
    absl_logging.set_verbosity(absl_logging.ERROR)
    try:
        yield
    finally:
        absl_logging.set_verbosity(verbosity)


class FolderPairs(LocalCodePath, tfds.core.GeneratorBasedBuilder):
    """The pairs of a data folder, one config per contents (see the module docstring).

    Features: `source`, `target` and `category` (text; category "" where the file has two
    columns). Splits: `train` and those of `dev`, `test`, `gen` whose file is there, in file
    order; example keys are line indices.

    Args:
        folder: the data folder.
        sha256: its `content_sha256`, when the caller has it (it names the config).
        **kwargs: passed to `tfds.core.GeneratorBasedBuilder` (`data_dir`, ...).
    """

    VERSION = tfds.core.Version("1.0.0")
    RELEASE_NOTES = {"1.0.0": "Initial release: train/dev/test/gen TSV files of a folder."}

    def __init__(self, *, folder, sha256: str | None = None, **kwargs):
        self._folder = Path(folder)
        self._sha256 = sha256 or content_sha256(folder)
        config = tfds.core.BuilderConfig(name=config_name(self._sha256),
                                         description=f"the TSV files of {self._folder}")
        # Every folder's config is made here, not listed in BUILDER_CONFIGS, and TFDS logs
        # a warning for each such config each time a builder is made: not worth a line.
        with _absl_errors_only():
            super().__init__(config=config, **kwargs)

    def is_prepared(self) -> bool:
        """Whether these contents are built; TFDS's warning when they are not is hidden:
        that is the first state of every folder's contents, and a bad file's one line
        would come after it."""
        with _absl_errors_only():
            return super().is_prepared()

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(
            builder=self,
            description="Pairs of a folder of TSV files: source<TAB>target[<TAB>category].",
            features=tfds.features.FeaturesDict({"source": tfds.features.Text(),
                                                 "target": tfds.features.Text(),
                                                 "category": tfds.features.Text()}),
            supervised_keys=("source", "target"),
            disable_shuffling=True,  # file order is part of the contract
        )

    def _split_generators(self, dl_manager):
        del dl_manager  # the files are local
        sha256, rows = read_folder(self._folder)
        if sha256 != self._sha256:  # the files changed after the config was named
            raise FolderDataError(f"data folder {self._folder} changed while it was read; "
                                  f"run again")
        return {split: self._generate_examples(split_rows) for split, split_rows in rows.items()}

    def _generate_examples(self, rows):
        for line, (source, target, category) in enumerate(rows):
            yield line, {"source": source, "target": target, "category": category}
