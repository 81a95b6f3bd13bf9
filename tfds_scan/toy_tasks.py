"""The three toy tasks of "Symmetry and systematicity", generated offline and seeded.

- `rule_learning()`: Marcus et al. (1999) ABA vs ABB syllable sentences, training
  syllables disjoint from test syllables; `rule_learning_array` gives the
  paper's 12 x 3 encoding (syllables as positions, time steps as channels).
- `composition(seed)`: `jump four` -> `JUMP JUMP JUMP JUMP` over 10 commands x 10
  modifiers; 1,000 pairs sampled with replacement; three command-modifier
  combinations removed from training form the whole test set.
- `palindromes(seed)`: the grammar S -> aSa | bSb | cSc | dSd | o; training,
  in-domain, long and depth test sets.

References:
    "Symmetry and systematicity" (anonymous, under review), Secs. 2-4 and
    Appendices B, C; Marcus, Vijayan, Bandi Rao & Vishton (1999), Rule
    learning by seven-month-old infants, Science.
"""

from __future__ import annotations

import itertools

import numpy as np

# ------------------------------------------------------------------ rule learning
TRAIN_A = ("ga", "li", "ni", "ta")
TRAIN_B = ("ti", "na", "gi", "la")
TEST_A = ("wo", "de")
TEST_B = ("fe", "ko")
SYLLABLES = TRAIN_A + TRAIN_B + TEST_A + TEST_B
RULES = ("ABA", "ABB")


def rule_learning() -> dict[str, list[tuple[tuple[str, str, str], int]]]:
    """{"train", "test"}: every (sentence, label) with label 0 = ABA, 1 = ABB."""
    def sentences(a_syllables, b_syllables):
        return [((a, b, a), 0) for a, b in itertools.product(a_syllables, b_syllables)] + \
               [((a, b, b), 1) for a, b in itertools.product(a_syllables, b_syllables)]
    return {"train": sentences(TRAIN_A, TRAIN_B), "test": sentences(TEST_A, TEST_B)}


def rule_learning_array(sentences) -> np.ndarray:
    """(n, 12, 3) binary: [i, s, t] = 1 when sentence i has syllable s at time t."""
    out = np.zeros((len(sentences), len(SYLLABLES), 3), np.float32)
    for i, sentence in enumerate(sentences):
        for t, syllable in enumerate(sentence):
            out[i, SYLLABLES.index(syllable), t] = 1.0
    return out


# ------------------------------------------------------------------- composition
COMMANDS = ("jump", "walk", "run", "look", "swim", "crawl", "hop", "skip", "fly", "spin")
MODIFIERS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def compose(command: str) -> str:
    """`jump four` -> `JUMP JUMP JUMP JUMP`."""
    words = command.split()
    if len(words) != 2 or words[0] not in COMMANDS or words[1] not in MODIFIERS:
        raise ValueError(f"not a composition command (one of {COMMANDS} and one of "
                         f"{MODIFIERS}): {command!r}")
    return " ".join([words[0].upper()] * (MODIFIERS.index(words[1]) + 1))


def composition(seed: int = 0, pairs: int = 1000, held_out: int = 3) -> dict:
    """{"train", "test": [(command, actions)], "held_out": [combinations]}.

    `pairs` commands are drawn uniformly with replacement from the 100
    combinations; `held_out` combinations (chosen by `seed`, among those drawn)
    are removed from training, and their drawn instances are the test set.
    """
    rng = np.random.default_rng(seed)
    combinations = [f"{c} {m}" for c, m in itertools.product(COMMANDS, MODIFIERS)]
    drawn = [combinations[i] for i in rng.integers(0, len(combinations), size=pairs)]
    candidates = sorted(set(drawn))
    chosen = {candidates[i] for i in rng.choice(len(candidates), held_out, replace=False)}
    return {"train": [(c, compose(c)) for c in drawn if c not in chosen],
            "test": [(c, compose(c)) for c in drawn if c in chosen],
            "held_out": sorted(chosen)}


# ------------------------------------------------------------------- palindromes
PALINDROME_SYMBOLS = ("a", "b", "c", "d")
CENTRE = "o"
TRAIN_LENGTHS = (15, 17, 19, 21, 23, 25)
LONG_LENGTHS = (29, 33, 37)
DEPTH_LIMIT = 4  # the depth test: strings with more than 4 `a`s


def is_palindrome_sentence(text: str) -> bool:
    """Membership in S -> aSa | bSb | cSc | dSd | o."""
    symbols = text.split()
    half = len(symbols) // 2
    return (len(symbols) % 2 == 1 and symbols[half] == CENTRE
            and all(s in PALINDROME_SYMBOLS for s in symbols[:half])
            and symbols[:half] == symbols[half + 1:][::-1])


def _palindrome(rng, length: int) -> str:
    half = [PALINDROME_SYMBOLS[i] for i in rng.integers(0, 4, size=(length - 1) // 2)]
    return " ".join(half + [CENTRE] + half[::-1])


def _sample(rng, lengths, count, accept, exclude=frozenset()):
    out = []
    for i in range(count):
        length = lengths[i % len(lengths)]
        for _ in range(10_000):
            text = _palindrome(rng, length)
            if accept(text) and text not in exclude:
                out.append(text)
                break
        else:
            raise RuntimeError(f"could not draw a string of length {length} for this split")
    return out


def a_count(text: str) -> int:
    """The number of `a` symbols in a space-separated string: what the depth splits count."""
    return text.split().count("a")


def palindromes(seed: int = 0, train_size: int = 100_000, test_size: int = 1_000) -> dict:
    """Palindrome splits (strings of space-separated symbols), reproducible by `seed`.

    - "train": `train_size` strings, lengths 15-25 (odd), cycled evenly, with
      repetitions as drawn;
    - "test": `test_size` strings of the training lengths absent from "train";
    - "long": `test_size` strings of lengths 29, 33, 37;
    - "depth_train": like "train" but without strings of more than 4 `a`s;
    - "depth_test": `test_size` strings of the training lengths with more than 4 `a`s.

    The task is next-symbol prediction, scored on the symbols after the centre `o`.
    """
    rng = np.random.default_rng(seed)
    anything = lambda text: True  # noqa: E731
    train = _sample(rng, TRAIN_LENGTHS, train_size, anything)
    depth_train = _sample(rng, TRAIN_LENGTHS, train_size,
                          lambda text: a_count(text) <= DEPTH_LIMIT)
    return {
        "train": train,
        "test": _sample(rng, TRAIN_LENGTHS, test_size, anything, exclude=frozenset(train)),
        "long": _sample(rng, LONG_LENGTHS, test_size, anything),
        "depth_train": depth_train,
        "depth_test": _sample(rng, TRAIN_LENGTHS, test_size,
                              lambda text: a_count(text) > DEPTH_LIMIT),
    }
