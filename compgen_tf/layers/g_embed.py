"""`GEmbed`: permutation-equivariant word embeddings (Gordon et al. 2020, eq. 2)."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from compgen_tf.arguments import positive_int
from compgen_tf.groups import Symmetry
from compgen_tf.layers.weight_arguments import set_weight_arguments, weight_arguments_config

SIDES = ("input", "output")


@keras.saving.register_keras_serializable(package="compgen_tf")
class GEmbed(keras.layers.Layer):
    """Embeds each word as a function on the group: e(w)_g = psi(g^-1 w).

    Row g of a word's (|G|, K) embedding is the ordinary embedding of the word
    g^-1 w, so transforming the words of a sentence by g translates every
    embedding along the group axis: e(g w)(h) = e(w)(g^-1 h). Written in
    `keras.ops`: it runs on the TensorFlow, JAX and PyTorch backends.

    Args:
        symmetry: a `compgen_tf.groups.Symmetry`, its config dict, or a SCAN
            symmetry name.
        vocabulary: the words of the token ids, in id order (id i is
            `vocabulary[i]`; special tokens are fixed by every element).
        output_dim: K, the channels per group element.
        side: "input" (the symmetry's action on commands) or "output" (on actions).
        embeddings_initializer: Keras initializer of psi.
        embeddings_regularizer: Keras regularizer of psi (or None).
        embeddings_constraint: Keras constraint of psi (or None).
        mask_zero: id 0 is padding: the layer returns a mask (ids != 0) that
            masking-aware layers downstream (e.g. `keras.layers.RNN`) follow.
            Id 0 must be a word that no group element moves (`<pad>`).
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        ids: (...,) integer token ids.

    Returns:
        (..., |G|, output_dim).

    Example:
        >>> embed = GEmbed("verb", ["<pad>", "jump", "look", "run", "walk", "twice"], 8)
        >>> embed(np.array([[1, 5]])).shape
        (1, 2, 4, 8)

    References:
        Gordon et al. (2020), Permutation equivariant models for compositional
        generalization in language, Sec. 4.1, eq. (2).
    """

    def __init__(self, symmetry, vocabulary, output_dim: int, side: str = "input",
                 embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero: bool = False, **kwargs):
        super().__init__(**kwargs)
        output_dim = positive_int("output_dim", output_dim)
        if side not in SIDES:
            raise ValueError(f"side must be one of {SIDES}, got {side!r}")
        self.symmetry = Symmetry.from_config(symmetry)
        self.vocabulary = list(vocabulary)
        self.output_dim = output_dim
        self.side = side
        set_weight_arguments(self, embeddings_initializer=embeddings_initializer,
                             embeddings_regularizer=embeddings_regularizer,
                             embeddings_constraint=embeddings_constraint)
        self.mask_zero = bool(mask_zero)
        action = self.symmetry.input_action if side == "input" else self.symmetry.output_action
        moves = action.on_vocabulary(self.vocabulary)  # [g, v] = index of g v
        if self.mask_zero and np.any(moves[:, 0] != 0):
            raise ValueError(f"mask_zero=True needs id 0 to be padding that no group element "
                             f"moves, but {self.vocabulary[0]!r} is moved by the {side} action")
        group = self.symmetry.group
        # [v, g] = index of g^-1 v: one gather turns ids into the words to embed.
        self._inverse_images = np.asarray(moves[group.inverses].T, np.int32)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(name="embeddings",
                                          shape=(len(self.vocabulary), self.output_dim),
                                          initializer=self.embeddings_initializer,
                                          regularizer=self.embeddings_regularizer,
                                          constraint=self.embeddings_constraint)

    def call(self, ids):
        words = ops.take(self._inverse_images, ops.cast(ids, "int32"), axis=0)
        return ops.take(self.embeddings, words, axis=0)

    def compute_mask(self, ids, mask=None):
        return ops.not_equal(ids, 0) if self.mask_zero else None

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.symmetry.group.order, self.output_dim)

    def get_config(self):
        config = super().get_config()
        config.update({
            "symmetry": self.symmetry.get_config(),
            "vocabulary": self.vocabulary,
            "output_dim": self.output_dim,
            "side": self.side,
            **weight_arguments_config(self),
            "mask_zero": self.mask_zero,
        })
        return config
