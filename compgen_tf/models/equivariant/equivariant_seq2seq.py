"""The permutation-equivariant task model: `EquivariantSeq2Seq`, strings in and out."""

from __future__ import annotations

import keras

from compgen_tf.models.equivariant.equivariant_seq2seq_backbone import (
    EquivariantSeq2SeqBackbone)
from compgen_tf.models.seq2seq_model import Seq2SeqModel


@keras.saving.register_keras_serializable(package="compgen_tf")
class EquivariantSeq2Seq(Seq2SeqModel):
    """A sequence-to-sequence model equivariant to permutations of words.

    Every representation is a function on the group G of `symmetry`, a
    (|G|, channels) array per token. Encoder: `GEmbed` -> bidirectional G-LSTM
    (`hidden_units` K per direction; the two directions' features are
    concatenated per group element, 2K). Decoder: a G-LSTM of width 2K started
    from the encoder's final states; at each step the previous output word
    (`GEmbed` on the output action), and the equivariant attention context over
    the encoder states queried with the previous decoder state, are
    concatenated and mixed by tanh(`GroupConv`), fed to the G-LSTM, and
    `GDecode` gives the logits. Teacher forcing and greedy decoding are those
    of every `Seq2SeqModel`. The whole model is equivariant: translating a
    command by g (e.g. jump -> look) translates its translation by the same g
    (I_JUMP -> I_LOOK), exactly, with any weights. A command that some g
    leaves unchanged (`walk` under the left/right swap) therefore gets a
    g-invariant output distribution: the words of an orbit (I_TURN_LEFT and
    I_TURN_RIGHT) tie exactly, and greedy decoding takes the lower id.

    Args:
        backbone: an `EquivariantSeq2SeqBackbone` (its arguments: `symmetry`,
            `embedding_dim`, `hidden_units`).
        preprocessor: a `compgen_tf.models.preprocessor.Seq2SeqPreprocessor` whose
            vocabularies are the backbone's tokens.
        **kwargs: passed to `Seq2SeqModel`.

    `from_words(source_words, target_words, symmetry="verb", embedding_dim=64,
    hidden_units=64, dropout=0.0, ...)` builds both: `symmetry` is a
    `compgen_tf.groups.Symmetry`, its config, or a SCAN name: "verb" (|G| = 4; simple,
    add-jump), "direction" (2; around-right), "verb+direction" (8; length), "trivial";
    every word the symmetry moves must be in the vocabularies. `embedding_dim`: channels
    of the word embeddings per group element (paper: 64); `hidden_units`: K, G-LSTM
    channels of each encoder direction (paper: 64; the decoder has 2K); `dropout` must be
    0 (kept for the configuration format of the baseline).

    Call arguments: as `AttentionSeq2Seq`.

    Example:
        >>> model = EquivariantSeq2Seq.from_words(
        ...     ["jump", "look", "run", "walk", "twice"],
        ...     ["I_JUMP", "I_LOOK", "I_RUN", "I_WALK"], symmetry="verb", embedding_dim=4,
        ...     hidden_units=4)
        >>> model.translate(["jump twice"])  # untrained: some action string
        ['...']

    References:
        Gordon, Baroni, Bouchacourt & Lake (2020), Permutation equivariant
        models for compositional generalization in language, ICLR, Sec. 4 and
        Appendix B.
    """

    backbone_cls = EquivariantSeq2SeqBackbone
    # The backbone's tokens are the preprocessor's vocabularies.
    derived_arguments = frozenset({"source_tokens", "target_tokens"})

    def __init__(self, backbone, preprocessor, **kwargs):
        super().__init__(backbone, preprocessor, **kwargs)
        if (backbone.source_tokens != preprocessor.source_vocabulary
                or backbone.target_tokens != preprocessor.target_vocabulary):
            raise ValueError("the backbone's source_tokens and target_tokens must be the "
                             "preprocessor's vocabularies (special tokens first)")

    @property
    def symmetry(self):
        """The backbone's `compgen_tf.groups.Symmetry`."""
        return self.backbone.symmetry

    @classmethod
    def from_words(cls, source_words, target_words, symmetry="verb", dropout=0.0, **kwargs):
        if float(dropout) != 0.0:
            raise ValueError("EquivariantSeq2Seq has no dropout (it would break exact "
                             f"equivariance during training); got dropout={dropout}")
        return super().from_words(source_words, target_words, symmetry=symmetry, **kwargs)

    @classmethod
    def backbone_from_words(cls, preprocessor, symmetry="verb", **backbone_args):
        return cls.backbone_cls(symmetry, preprocessor.source_vocabulary,
                                preprocessor.target_vocabulary, name="backbone",
                                **backbone_args)
