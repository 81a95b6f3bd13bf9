"""Finite permutation groups acting on vocabularies (no Keras here).

A `Group` is a finite group given by its Cayley table. A `Symmetry` pairs one
group with two actions on words: one on the input language, one on the output
language (for SCAN's add-jump task: the cyclic group of order 4 shifting
`jump -> look -> run -> walk -> jump` in commands and `I_JUMP -> I_LOOK -> I_RUN
-> I_WALK -> I_JUMP` in actions). A model is equivariant when translating a
transformed command gives the transformed translation:
f(T_g x) = T'_g f(x) for every g; `check_equivariance` measures how far a
function is from that.

Conventions: elements are indices 0..|G|-1 and 0 is the identity;
`compose(g, h)` is g·h, "h first, then g" when elements act on words; a
function on the group (a "regular" feature, shape (..., |G|, K)) is
transformed by left translation, (T_g f)(h) = f(g^-1 h).

References:
    Gordon, Baroni, Bouchacourt & Lake (2020), Permutation equivariant models
    for compositional generalization in language, ICLR (Sec. 3-4).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np


class Group:
    """A finite group given by its Cayley table.

    Args:
        table: (n, n) integers, `table[g, h]` = the index of g·h. Element 0
            must be the identity; the table must be a group's (checked).
        names: optional names of the elements, for printing.

    Example:
        >>> z4 = Group.cyclic(4)
        >>> z4.compose(3, 2), z4.inverse(1)
        (1, 3)
    """

    def __init__(self, table, names: Sequence[str] | None = None):
        table = np.asarray(table)
        if table.ndim != 2 or table.shape[0] != table.shape[1] or table.shape[0] < 1:
            raise ValueError(f"a Cayley table must be square and non-empty, got shape "
                             f"{table.shape}")
        if not np.issubdtype(table.dtype, np.integer):
            raise ValueError(f"a Cayley table holds element indices, got dtype {table.dtype}")
        n = table.shape[0]
        if table.min() < 0 or table.max() >= n:
            raise ValueError(f"Cayley table entries must lie in 0..{n - 1}")
        if not (np.array_equal(table[0], np.arange(n)) and np.array_equal(table[:, 0],
                                                                          np.arange(n))):
            raise ValueError("element 0 must be the identity (table[0, h] = table[h, 0] = h)")
        for row in itertools.chain(table, table.T):
            if len(set(row.tolist())) != n:
                raise ValueError("not a group: a row or column of the Cayley table repeats an "
                                 "element (every element needs an inverse)")
        # Associativity: (g·h)·k == g·(h·k) for all triples.
        if not np.array_equal(table[table, :], _associate_right(table)):
            raise ValueError("not a group: the Cayley table is not associative")
        self.table = table.astype(np.int64)
        self.table.setflags(write=False)
        self.inverses = np.argmax(self.table == 0, axis=1)
        self.inverses.setflags(write=False)
        self.names = list(names) if names is not None else [f"g{i}" for i in range(n)]
        if len(self.names) != n:
            raise ValueError(f"{len(self.names)} names for {n} elements")

    @property
    def order(self) -> int:
        """|G|, the number of elements."""
        return self.table.shape[0]

    @property
    def elements(self) -> range:
        """The element indices, `range(order)`; 0 is the identity."""
        return range(self.order)

    identity = 0

    def compose(self, g: int, h: int) -> int:
        """g·h."""
        return int(self.table[g, h])

    def inverse(self, g: int) -> int:
        """The index of g^-1."""
        return int(self.inverses[g])

    @property
    def left_division_table(self) -> np.ndarray:
        """`idx[g, h]` = the index of g^-1·h: the gather table of group convolutions."""
        return self.table[self.inverses]

    @property
    def is_abelian(self) -> bool:
        """Whether g·h = h·g for every pair (the Cayley table is symmetric)."""
        return bool(np.array_equal(self.table, self.table.T))

    def right_translations(self) -> np.ndarray:
        """(|G|, |G|, |G|) 0/1 matrices S with S[u, g, h] = 1 iff h = g·u: (S_u f)(g) = f(g·u).

        A group convolution is a sum of these, out = sum_u S_u f psi(u) (Definition 4
        of Gordon et al. 2020, with h = g·u).
        """
        n = self.order
        matrices = np.zeros((n, n, n))
        for u in self.elements:
            matrices[u, np.arange(n), self.table[:, u]] = 1.0
        return matrices

    def real_fourier_basis(self) -> tuple[np.ndarray, int]:
        """An orthonormal basis of the functions on an abelian group that splits every
        right translation into blocks of size 1 and 2.

        The characters of an abelian group are the common eigenvectors of its
        translations. Real characters give 1-dimensional blocks; each pair of
        complex-conjugate characters chi, conj(chi) gives a 2-dimensional block,
        spanned by Re chi and Im chi, on which S_u acts as a rotation. In this
        basis a group convolution costs about |G| products of K x K' matrices
        instead of one product of a (|G|·K) x (|G|·K') matrix.

        Returns:
            (basis, real): `basis` (|G|, |G|), orthogonal, columns the basis
            functions: first the `real` real characters, then the two columns
            of each conjugate pair, side by side. `basis.T @ S_u @ basis` is
            block-diagonal for every u.

        Raises:
            ValueError: for a non-abelian group (its irreducible representations
                can be larger than 2; use the dense convolution matrix).
        """
        if not self.is_abelian:
            raise ValueError("real_fourier_basis needs an abelian group")
        n = self.order
        translations = self.right_translations()
        # A generic combination of the translations has one distinct eigenvalue per character.
        weights = np.random.default_rng(0).normal(size=n)
        values, vectors = np.linalg.eig(np.tensordot(weights, translations, 1))
        # chi(identity) = 1 fixes each eigenvector's scale and phase: it is the character.
        characters = vectors / vectors[self.identity]
        real, pairs = [], []
        for value, character in zip(values, characters.T):
            if abs(value.imag) < 1e-9:
                real.append(character.real / np.sqrt(n))
            elif value.imag > 0:  # one of each conjugate pair
                pairs += [character.real * np.sqrt(2 / n), character.imag * np.sqrt(2 / n)]
        basis = np.stack(real + pairs, axis=1)
        if basis.shape != (n, n) or not np.allclose(basis.T @ basis, np.eye(n), atol=1e-9):
            raise RuntimeError("could not separate the characters of this group")
        return basis, len(real)

    def translate(self, g: int, features, axis: int = -2):
        """Left translation of a function on the group along `axis`: (T_g f)(h) = f(g^-1 h)."""
        return np.take(np.asarray(features), self.table[self.inverse(g)], axis=axis)

    def __eq__(self, other):
        return isinstance(other, Group) and np.array_equal(self.table, other.table)

    def __hash__(self):
        return hash(self.table.tobytes())

    def __repr__(self):
        return f"Group(order={self.order})"

    # ------------------------------------------------------------ constructions
    @classmethod
    def trivial(cls) -> "Group":
        """The group of one element, the identity "e"."""
        return cls([[0]], names=["e"])

    @classmethod
    def cyclic(cls, n: int) -> "Group":
        """Z_n: element k is "shift by k"."""
        if int(n) != n or n < 1:
            raise ValueError(f"a cyclic group needs a positive order, got {n!r}")
        k = np.arange(int(n))
        return cls((k[:, None] + k[None, :]) % int(n), names=[f"shift{i}" for i in k])

    @classmethod
    def direct_product(cls, first: "Group", second: "Group") -> "Group":
        """G x H; element (a, b) has index a * |H| + b."""
        m = second.order
        a, b = np.divmod(np.arange(first.order * m), m)
        table = first.table[a[:, None], a[None, :]] * m + second.table[b[:, None], b[None, :]]
        names = [f"({first.names[i]},{second.names[j]})" for i, j in zip(a, b)]
        return cls(table, names=names)

    @classmethod
    def from_generators(cls, generators: Sequence[Sequence[int]]):
        """The group generated by permutations of 0..n-1 (closure under composition).

        Returns (group, permutations): `permutations[g]` is element g as an index
        array, `permutations[0]` the identity, `permutations[group.compose(g, h)]`
        = `permutations[g][permutations[h]]`.
        """
        generators = [np.asarray(p, dtype=np.int64) for p in generators]
        if not generators:
            raise ValueError("give at least one generator")
        n = len(generators[0])
        for p in generators:
            if p.shape != (n,) or sorted(p.tolist()) != list(range(n)):
                raise ValueError(f"not a permutation of 0..{n - 1}: {p.tolist()}")
        found = {tuple(range(n)): 0}
        permutations = [np.arange(n)]
        frontier = [np.arange(n)]
        while frontier:
            new = []
            for p in frontier:
                for generator in generators:
                    q = generator[p]
                    if tuple(q) not in found:
                        found[tuple(q)] = len(permutations)
                        permutations.append(q)
                        new.append(q)
            frontier = new
        permutations = np.stack(permutations)
        table = np.array([[found[tuple(g[h])] for h in permutations] for g in permutations])
        return cls(table), permutations


def _associate_right(table):
    """g·(h·k) for all (g, h, k), as an (n, n, n) array."""
    return table[np.arange(len(table))[:, None, None], table[None, :, :]]


class WordAction:
    """A group acting on a vocabulary by permuting words.

    Args:
        group: the acting `Group`.
        words: the words it moves (any other word is a fixed point).
        permutations: (|G|, len(words)) indices into `words`: element g sends
            `words[i]` to `words[permutations[g, i]]`; must be a homomorphism.
    """

    def __init__(self, group: Group, words: Sequence[str], permutations):
        words = list(words)
        permutations = np.asarray(permutations, dtype=np.int64)
        if len(set(words)) != len(words):
            raise ValueError(f"repeated words in {words}")
        if permutations.shape != (group.order, len(words)):
            raise ValueError(f"permutations must have shape ({group.order}, {len(words)}), got "
                             f"{permutations.shape}")
        for g in group.elements:
            for h in group.elements:
                if not np.array_equal(permutations[group.compose(g, h)],
                                      permutations[g][permutations[h]]):
                    raise ValueError("not a group action: the permutation of g·h is not the "
                                     f"permutation of h followed by that of g (g={g}, h={h})")
        self.group, self.words, self.permutations = group, words, permutations

    def act(self, g: int, word: str) -> str:
        """The word g·w."""
        try:
            return self.words[self.permutations[g, self.words.index(word)]]
        except ValueError:
            return word

    def on_vocabulary(self, vocabulary: Sequence[str]) -> np.ndarray:
        """(|G|, V) indices: row g sends vocabulary index v to the index of g·vocabulary[v].

        Every moved word must be in the vocabulary (a word and its images
        together, or the action would leave it).
        """
        vocabulary = list(vocabulary)
        missing = [w for w in self.words if w not in vocabulary]
        if missing:
            raise ValueError(f"words {missing} of the symmetry are not in the vocabulary "
                             f"{vocabulary}")
        position = {w: i for i, w in enumerate(vocabulary)}
        table = np.tile(np.arange(len(vocabulary)), (self.group.order, 1))
        for g in self.group.elements:
            for i, word in enumerate(self.words):
                table[g, position[word]] = position[self.words[self.permutations[g, i]]]
        return table

    def orbits(self, vocabulary: Sequence[str]) -> np.ndarray:
        """(V,) orbit labels 0, 1, ... of the vocabulary under this action."""
        table = self.on_vocabulary(vocabulary)
        labels = -np.ones(len(vocabulary), dtype=np.int64)
        for v in range(len(vocabulary)):
            if labels[v] < 0:
                labels[np.unique(table[:, v])] = labels.max() + 1
        return labels


class Symmetry:
    """One group acting on both languages: a direct product of cycles of words.

    Each cycle pairs a list of input words with a list of output words of the
    same length; element k of its cyclic factor sends word i to word i + k
    (mod length) in both lists at once. Several cycles give the direct product
    of their cyclic groups.

    Args:
        input_cycles: list of input word lists, e.g. `[["jump", "look", "run", "walk"]]`.
        output_cycles: the matching output word lists, e.g.
            `[["I_JUMP", "I_LOOK", "I_RUN", "I_WALK"]]`.

    Example:
        >>> verbs = Symmetry.for_scan("verb")
        >>> verbs.group.order, verbs.input_action.act(1, "jump"), verbs.output_action.act(1, "I_JUMP")
        (4, 'look', 'I_LOOK')

    References:
        Gordon et al. (2020), Sec. 3 and 6.
    """

    SCAN_CYCLES = {
        "verb": ([["jump", "look", "run", "walk"]], [["I_JUMP", "I_LOOK", "I_RUN", "I_WALK"]]),
        "direction": ([["left", "right"]], [["I_TURN_LEFT", "I_TURN_RIGHT"]]),
        "trivial": ([], []),
    }

    def __init__(self, input_cycles: Sequence[Sequence[str]] = (),
                 output_cycles: Sequence[Sequence[str]] = ()):
        input_cycles = [list(c) for c in input_cycles]
        output_cycles = [list(c) for c in output_cycles]
        if len(input_cycles) != len(output_cycles):
            raise ValueError(f"{len(input_cycles)} input cycles but {len(output_cycles)} "
                             "output cycles: they come in pairs")
        for a, b in zip(input_cycles, output_cycles):
            if len(a) != len(b) or len(a) < 2:
                raise ValueError(f"paired cycles must have the same length >= 2: {a} / {b}")
        for cycles, side in ((input_cycles, "input"), (output_cycles, "output")):
            flat = [w for c in cycles for w in c]
            if len(set(flat)) != len(flat):
                raise ValueError(f"the {side} cycles share or repeat words: {cycles}")
        self.input_cycles, self.output_cycles = input_cycles, output_cycles
        group = None
        for cycle in input_cycles:
            factor = Group.cyclic(len(cycle))
            group = factor if group is None else Group.direct_product(group, factor)
        self.group = group or Group.trivial()
        self.input_action = self._action(input_cycles)
        self.output_action = self._action(output_cycles)

    def _action(self, cycles) -> WordAction:
        words = [w for c in cycles for w in c]
        lengths = [len(c) for c in cycles]
        permutations = np.zeros((self.group.order, len(words)), dtype=np.int64)
        for g, shifts in enumerate(itertools.product(*(range(n) for n in lengths))):
            offset = 0
            for n, shift in zip(lengths, shifts):
                permutations[g, offset:offset + n] = offset + (np.arange(n) + shift) % n
                offset += n
        return WordAction(self.group, words, permutations)

    @classmethod
    def for_scan(cls, name: str) -> "Symmetry":
        """`verb` (|G| = 4), `direction` (2), `verb+direction` (8) or `trivial` (1)."""
        parts = name.split("+")
        if any(p not in cls.SCAN_CYCLES for p in parts) or len(set(parts)) != len(parts):
            raise ValueError(f"unknown SCAN symmetry {name!r}; expected one of "
                             f"{sorted(cls.SCAN_CYCLES)} or a '+' combination such as "
                             "'verb+direction'")
        inputs = [c for p in parts for c in cls.SCAN_CYCLES[p][0]]
        outputs = [c for p in parts for c in cls.SCAN_CYCLES[p][1]]
        return cls(inputs, outputs)

    def get_config(self) -> dict:
        """`{"input_cycles": ..., "output_cycles": ...}`, JSON-serializable; `from_config`
        rebuilds an equal `Symmetry`."""
        return {"input_cycles": self.input_cycles, "output_cycles": self.output_cycles}

    @classmethod
    def from_config(cls, config) -> "Symmetry":
        """A `Symmetry` from a `get_config` dict, a SCAN name for `for_scan` (such as
        `"verb+direction"`) or a `Symmetry` (returned as it is)."""
        if isinstance(config, Symmetry):
            return config
        if isinstance(config, str):
            return cls.for_scan(config)
        return cls(**config)

    def __eq__(self, other):
        return isinstance(other, Symmetry) and self.get_config() == other.get_config()

    def __repr__(self):
        return f"Symmetry(input_cycles={self.input_cycles}, output_cycles={self.output_cycles})"


# ------------------------------------------------------------------ equivariance
def regular_transform(group: Group, axis: int = -2) -> Callable:
    """T_g on features that are functions on the group (the group axis at `axis`)."""
    return lambda g, x: group.translate(g, x, axis=axis)


def ids_transform(permutations: np.ndarray) -> Callable:
    """T_g on token ids: id v becomes `permutations[g, v]` (see `WordAction.on_vocabulary`)."""
    return lambda g, ids: permutations[g][np.asarray(ids)]


def scores_transform(permutations: np.ndarray, axis: int = -1) -> Callable:
    """T_g on per-word scores (logits): the score of v moves to g·v along `axis`."""
    def transform(g, scores):
        scores = np.moveaxis(np.asarray(scores), axis, -1)
        out = np.empty_like(scores)
        out[..., permutations[g]] = scores
        return np.moveaxis(out, -1, axis)
    return transform


def check_equivariance(fn: Callable, group: Group, inputs, input_transform: Callable,
                       output_transform: Callable) -> float:
    """max over g of max |fn(T_g x) - T'_g fn(x)|: 0 for an exactly equivariant `fn`.

    `input_transform(g, x)` and `output_transform(g, y)` apply the group
    element g to an input and to an output (see `regular_transform`,
    `ids_transform`, `scores_transform`); tensors are converted to NumPy.

    Example:
        >>> z2 = Group.cyclic(2)
        >>> check_equivariance(lambda x: 2 * x, z2, np.ones((2, 3)),
        ...                    regular_transform(z2, 0), regular_transform(z2, 0))
        0.0
    """
    reference = _numpy(fn(inputs))
    worst = 0.0
    for g in group.elements:
        moved = _numpy(fn(input_transform(g, inputs)))
        expected = _numpy(output_transform(g, reference))
        if moved.shape != expected.shape:
            raise ValueError(f"output shapes differ under g={g}: {moved.shape} vs "
                             f"{expected.shape}")
        if moved.size:
            worst = max(worst, float(np.max(np.abs(moved.astype(np.float64)
                                                   - expected.astype(np.float64)))))
    return worst


def _numpy(value):
    """A NumPy array from a NumPy, TensorFlow, JAX or PyTorch value (no Keras import here)."""
    if hasattr(value, "detach"):  # a PyTorch tensor, possibly on a GPU or tracking gradients
        value = value.detach().cpu()
    return value.numpy() if hasattr(value, "numpy") else np.asarray(value)
