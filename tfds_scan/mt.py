"""The English–French translation set of Lake & Baroni (2018), as Python pairs.

The files ship in `tfds_scan/data/mt/` (see its README for provenance and license). Four
configs, named as the library's tasks: `mt_eng_fra` and `mt_fra_eng` (the two directions),
and `mt_eng_fra_daxy` / `mt_fra_eng_daxy`, whose training split ends with 1,000 copies of
`i am daxy .` -> `je suis daxiste .` (Lake & Baroni's novel word, as in the authors' files).
Every config has the same three official splits: `train` (9,999 pairs, 10,999 with the daxy
copies), `test` (1,191 pairs; the 8 daxy sentences come first, as in the authors' file) and
`daxy` (those 8 sentences alone: `you are daxy .`, `he is not daxy .`, ...). Validation is
carved from train exactly as for SCAN (`splits.split_line_indices`).

Example:
    >>> pairs = mt_examples("mt_eng_fra_daxy")
    >>> len(pairs["train"]), len(pairs["test"]), pairs["daxy"][0]
    (10999, 1191, ('you are daxy .', 'tu es daxiste .'))
"""

from __future__ import annotations

from pathlib import Path

from tfds_scan import splits

DATA_DIR = Path(__file__).resolve().parent / "data" / "mt"
CONFIG_NAMES = ("mt_eng_fra", "mt_eng_fra_daxy", "mt_fra_eng", "mt_fra_eng_daxy")
SPLITS = ("train", "test", "daxy")
DAXY_PAIR = ("i am daxy .", "je suis daxiste .")
DAXY_COPIES = 1_000
NUM_DAXY_SENTENCES = 8
CONFIG_DESCRIPTIONS = {
    "mt_eng_fra": "English to French.",
    "mt_eng_fra_daxy": "English to French; train ends with 1,000 copies of 'i am daxy .'.",
    "mt_fra_eng": "French to English.",
    "mt_fra_eng_daxy": "French to English; train ends with 1,000 copies of 'je suis daxiste .'.",
}


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """(english, french) pairs of a file of `IN: <english> OUT: <french>` lines."""
    pairs = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        english, separator, french = line.partition(" OUT: ")
        if not (english.startswith("IN: ") and separator):
            raise ValueError(f"{path}:{number}: expected 'IN: <english> OUT: <french>', "
                             f"got {line!r}")
        pairs.append((english[len("IN: "):].strip(), french.strip()))
    return pairs


def check_config_name(name: str) -> None:
    """Raises a ValueError listing the configs if `name` is not one."""
    if name not in CONFIG_NAMES:
        raise ValueError(f"unknown translation config {name!r}; valid names: "
                         f"{', '.join(CONFIG_NAMES)}")


def check_split_name(split: str) -> None:
    """Raises a ValueError listing the splits if `split` is not one of an MT config's."""
    if split not in SPLITS + ("validation", "fit"):
        raise ValueError(f"Unknown split {split!r}; valid splits: train, validation, fit, "
                         "test, daxy.")


def mt_examples(name: str) -> dict[str, list[tuple[str, str]]]:
    """`{"train", "test", "daxy"}` -> (source, target) pairs of config `name`, file order."""
    check_config_name(name)
    english_french = {"train": read_pairs(DATA_DIR / "train.txt"),
                      "test": read_pairs(DATA_DIR / "test.txt")}
    if name.endswith("_daxy"):
        english_french["train"] += [DAXY_PAIR] * DAXY_COPIES
    english_french["daxy"] = english_french["test"][:NUM_DAXY_SENTENCES]
    flip = name.startswith("mt_fra_eng")
    return {split: [(t, s) if flip else (s, t) for s, t in pairs]
            for split, pairs in english_french.items()}


def load_mt_examples(name: str, split: str = "train", *, validation_fraction: float = 0.1,
                     validation_seed: int = 0,
                     validation_carve: str = "random") -> list[tuple[str, str]]:
    """One split of an MT config as pairs, without TFDS files: `train`, `test`, `daxy`,
    or `validation` / `fit` carved from train as for SCAN. Same contents and order as
    `tfds_scan.load_pairs(name, split, ...)`."""
    check_config_name(name)
    check_split_name(split)
    splits.check_validation_fraction(validation_fraction)
    splits.check_validation_carve(validation_carve)
    examples = mt_examples(name)
    if split in ("test", "daxy"):
        return examples[split]
    return splits.carved(examples["train"], split, validation_fraction=validation_fraction,
                         validation_seed=validation_seed, validation_carve=validation_carve)
