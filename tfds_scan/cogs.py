"""COGS (Kim & Linzen 2020), as Python triples: English sentences, logical forms, categories.

The four files ship xz-compressed in `tfds_scan/data/cogs/` (see its README for provenance,
licenses and checksums). One config, `cogs`, with the official splits in file order:
`train` (24,155 lines), `dev` (3,000), `test` (3,000, in distribution) and `gen` (21,000:
21 generalization categories of 1,000 lines each). Every line is
`sentence<TAB>logical form<TAB>category`, tokens separated by single spaces.

Unlike SCAN and the MT set, a COGS run validates on the official dev set, not on a carve of
train: `validation` is `dev` and `fit` is all of `train` (so `validation_fraction`,
`validation_seed` and `validation_carve` are checked but change nothing). The COGS authors
report results by category and separately for lexical and structural generalization:
`STRUCTURAL_CATEGORIES` are structural, every other gen category lexical
(`category_group`).

Example:
    >>> examples = cogs_examples("cogs")
    >>> len(examples["train"]), len(examples["gen"]), examples["gen"][0][2]
    (24155, 21000, 'prim_to_subj_proper')
"""

from __future__ import annotations

import functools
import lzma
from pathlib import Path

from tfds_scan import splits

DATA_DIR = Path(__file__).resolve().parent / "data" / "cogs"
CONFIG_NAMES = ("cogs",)
SPLITS = ("train", "dev", "test", "gen")
# The library's part names -> the official split they read: validation is the official dev.
PART_SPLITS = {"train": "train", "fit": "train", "validation": "dev", "dev": "dev",
               "test": "test", "gen": "gen"}
STRUCTURAL_CATEGORIES = ("cp_recursion", "pp_recursion", "obj_pp_to_subj_pp")
CONFIG_DESCRIPTIONS = {
    "cogs": "The official COGS splits: train, dev, test (in distribution) and gen (21 "
            "generalization categories).",
}

Triple = tuple[str, str, str]


def read_triples(path: Path) -> list[Triple]:
    """The (sentence, logical form, category) lines of a COGS file, plain or `.xz`.

    Args:
        path: A file of `sentence<TAB>logical form<TAB>category` lines.

    Returns:
        The triples in file order.

    Raises:
        ValueError: Naming the file and line of a line without exactly three fields.
    """
    path = Path(path)
    data = path.read_bytes()
    text = (lzma.decompress(data) if path.suffix == ".xz" else data).decode("utf-8")
    triples = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("\t")
        if len(fields) != 3:
            raise ValueError(f"{path}:{number}: expected 3 tab-separated fields "
                             f"(sentence, logical form, category), got {len(fields)}")
        triples.append((fields[0], fields[1], fields[2]))
    return triples


def check_config_name(name: str) -> None:
    """Raises a ValueError listing the configs if `name` is not one."""
    if name not in CONFIG_NAMES:
        raise ValueError(f"unknown COGS config {name!r}; valid names: {', '.join(CONFIG_NAMES)}")


def check_split_name(split: str) -> None:
    """Raises a ValueError listing the splits if `split` is not one of COGS's parts."""
    if split not in PART_SPLITS:
        raise ValueError(f"Unknown split {split!r}; valid splits: {', '.join(PART_SPLITS)} "
                         "(validation is the official dev set, fit all of train).")


@functools.lru_cache(maxsize=None)
def _shipped_triples(split: str) -> tuple[Triple, ...]:
    return tuple(read_triples(DATA_DIR / f"{split}.tsv.xz"))


def cogs_examples(name: str) -> dict[str, list[Triple]]:
    """`{"train", "dev", "test", "gen"}` -> (sentence, logical form, category) triples of
    config `name`, in file order (fresh lists)."""
    check_config_name(name)
    return {split: list(_shipped_triples(split)) for split in SPLITS}


def load_cogs_triples(name: str, split: str = "train", *, validation_fraction: float = 0.1,
                      validation_seed: int = 0,
                      validation_carve: str = "random") -> list[Triple]:
    """One part of a COGS config as triples, without TFDS files: `train`, `dev`, `test`,
    `gen`, `validation` (= dev) or `fit` (= train). The validation arguments are checked as
    for SCAN but do not apply: COGS validates on its official dev set."""
    check_config_name(name)
    check_split_name(split)
    splits.check_validation_fraction(validation_fraction)
    splits.check_validation_carve(validation_carve)
    return list(_shipped_triples(PART_SPLITS[split]))


def category_group(category: str) -> str:
    """`"structural"` for `STRUCTURAL_CATEGORIES`, `"in_distribution"` for the categories of
    train/dev/test (`in_distribution`, `primitive`, `exposure_example_*`), else `"lexical"`.

    Example:
        >>> category_group("pp_recursion"), category_group("subj_to_obj_common")
        ('structural', 'lexical')
    """
    if category in STRUCTURAL_CATEGORIES:
        return "structural"
    if category in ("in_distribution", "primitive") or category.startswith("exposure_example"):
        return "in_distribution"
    return "lexical"
