"""Token vocabularies with reserved special tokens.

The index layout is shared by every model in the library and matches
`keras.layers.StringLookup(mask_token=PAD, oov_token=UNK)` so that the same ids
come out of the Python side (training data) and the TensorFlow side (exported
graphs): 0 `<pad>`, 1 `<unk>`, 2 `<sos>`, 3 `<eos>`, then the words in sorted
order.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

PAD = "<pad>"
UNK = "<unk>"
SOS = "<sos>"
EOS = "<eos>"
SPECIAL_TOKENS = (PAD, UNK, SOS, EOS)
PAD_ID, UNK_ID, SOS_ID, EOS_ID = range(4)


class UnknownTokenError(ValueError):
    """Raised when a text holds words that are not in the vocabulary."""


class Vocabulary:
    """An ordered list of tokens: the special tokens, then the words.

    Args:
        words: the non-special words. Order is kept; duplicates and special
            tokens are rejected.
        name: a label used in error messages (e.g. "source", "target").

    Example:
        >>> vocab = Vocabulary.from_texts(["jump twice", "walk"], name="source")
        >>> vocab.tokens
        ['<pad>', '<unk>', '<sos>', '<eos>', 'jump', 'twice', 'walk']
        >>> vocab.ids("walk twice")
        [6, 5]
    """

    def __init__(self, words: Iterable[str], name: str = "vocabulary"):
        words = list(words)
        seen = set()
        for word in words:
            if not isinstance(word, str) or not word or word.split() != [word]:
                raise ValueError(f"{name}: a vocabulary word must be a non-empty string "
                                 f"without whitespace, got {word!r}")
            if word in SPECIAL_TOKENS:
                raise ValueError(f"{name}: {word!r} is reserved and added automatically")
            if word in seen:
                raise ValueError(f"{name}: duplicate word {word!r}")
            seen.add(word)
        self.words = words
        self.name = name
        self.tokens = list(SPECIAL_TOKENS) + words
        self._index = {token: i for i, token in enumerate(self.tokens)}

    @classmethod
    def from_texts(cls, texts: Iterable[str], name: str = "vocabulary") -> "Vocabulary":
        """Builds a vocabulary of every whitespace-separated word, sorted."""
        return cls(sorted({word for text in texts for word in text.split()}), name=name)

    def __len__(self) -> int:
        return len(self.tokens)

    def __eq__(self, other) -> bool:
        return isinstance(other, Vocabulary) and self.tokens == other.tokens

    def __repr__(self) -> str:
        return f"Vocabulary(name={self.name!r}, size={len(self)})"

    def unknown_words(self, texts: Iterable[str]) -> list[str]:
        """The sorted words of `texts` that the vocabulary lacks."""
        return sorted({w for text in texts for w in text.split() if w not in self._index})

    def check_known(self, texts: Iterable[str]) -> None:
        """Raises `UnknownTokenError` naming every unknown word, and the vocabulary."""
        unknown = self.unknown_words(texts)
        if unknown:
            raise UnknownTokenError(
                f"{self.name} vocabulary has no entry for {unknown}; known words: {self.words}")

    def ids(self, text: str) -> list[int]:
        """The ids of the words of `text` (no special tokens added)."""
        self.check_known([text])
        return [self._index[word] for word in text.split()]

    def text(self, ids: Iterable[int]) -> str:
        """Joins the tokens of `ids` up to the first `<eos>`, skipping padding."""
        words = []
        for i in ids:
            i = int(i)
            if i == EOS_ID:
                break
            if i != PAD_ID:
                words.append(self.tokens[i])
        return " ".join(words)

    def to_json(self) -> dict:
        return {"name": self.name, "words": self.words}

    @classmethod
    def from_json(cls, data: dict) -> "Vocabulary":
        return cls(data["words"], name=data.get("name", "vocabulary"))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> "Vocabulary":
        return cls.from_json(json.loads(Path(path).read_text()))
