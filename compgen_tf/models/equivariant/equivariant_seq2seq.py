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
        source_words, target_words, max_input_length, max_output_length: see
            `Seq2SeqModel`. Every word the symmetry moves must be in the
            vocabularies.
        symmetry: a `compgen_tf.groups.Symmetry`, its config, or a SCAN name:
            "verb" (|G| = 4; simple, add-jump), "direction" (2; around-right),
            "verb+direction" (8; length), "trivial".
        embedding_dim: channels of the word embeddings per group element (paper: 64).
        hidden_units: K, G-LSTM channels of each encoder direction (paper: 64);
            the decoder has 2K.
        dropout: must be 0 (kept for the configuration format of the baseline).
        **kwargs: passed to `Seq2SeqModel`.

    Call arguments: as `AttentionSeq2Seq`.

    Example:
        >>> model = EquivariantSeq2Seq(["jump", "look", "run", "walk", "twice"],
        ...                            ["I_JUMP", "I_LOOK", "I_RUN", "I_WALK"],
        ...                            symmetry="verb", embedding_dim=4, hidden_units=4)
        >>> model.translate(["jump twice"])  # untrained: some action string
        ['...']

    References:
        Gordon, Baroni, Bouchacourt & Lake (2020), Permutation equivariant
        models for compositional generalization in language, ICLR, Sec. 4 and
        Appendix B.
    """

    def __init__(self, source_words, target_words, symmetry="verb", embedding_dim=64,
                 hidden_units=64, dropout=0.0, **kwargs):
        if float(dropout) != 0.0:
            raise ValueError("EquivariantSeq2Seq has no dropout (it would break exact "
                             f"equivariance during training); got dropout={dropout}")
        super().__init__(source_words, target_words, **kwargs)
        self.backbone = EquivariantSeq2SeqBackbone(
            symmetry, self.source_vocabulary.tokens, self.target_vocabulary.tokens,
            embedding_dim=embedding_dim, hidden_units=hidden_units, name="backbone")
        self.symmetry = self.backbone.symmetry

    def get_config(self):
        config = super().get_config()
        config.update({"symmetry": self.symmetry.get_config(),
                       "embedding_dim": self.backbone.embedding_dim,
                       "hidden_units": self.backbone.hidden_units, "dropout": 0.0})
        return config
