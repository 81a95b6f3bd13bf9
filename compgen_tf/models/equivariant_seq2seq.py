"""Permutation-equivariant seq2seq (Gordon et al. 2020): G-LSTM encoder and decoder."""

from __future__ import annotations

import keras
import tensorflow as tf

from compgen_tf.arguments import positive_int
from compgen_tf.groups import Symmetry
from compgen_tf.layers import GAttention, GDecode, GEmbed, GLSTMCell, GroupConv
from compgen_tf.models.attention_seq2seq import AttentionSeq2Seq
from compgen_tf.models.seq2seq_model import Seq2SeqModel
from compgen_tf.vocabulary import PAD_ID


@keras.saving.register_keras_serializable(package="compgen_tf")
class EquivariantSeq2Seq(AttentionSeq2Seq):
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
    of `AttentionSeq2Seq`. The whole model is equivariant: translating a
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
        Seq2SeqModel.__init__(self, source_words, target_words, **kwargs)
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.hidden_units = positive_int("hidden_units", hidden_units)
        self.symmetry = Symmetry.from_config(symmetry)
        self.dropout_rate = 0.0
        order, width = self.symmetry.group.order, 2 * self.hidden_units
        self.order = order
        self.source_embedding = GEmbed(self.symmetry, self.source_vocabulary.tokens,
                                       self.embedding_dim, side="input", name="source_embedding")
        self.encoder = keras.layers.Bidirectional(
            keras.layers.RNN(GLSTMCell(self.symmetry, self.hidden_units), return_sequences=True,
                             return_state=True),
            merge_mode=None, name="encoder")
        self.target_embedding = GEmbed(self.symmetry, self.target_vocabulary.tokens,
                                       self.embedding_dim, side="output", name="target_embedding")
        self.attention = GAttention(name="attention")
        self.decoder_input = GroupConv(self.symmetry, width, name="decoder_input")
        self.decoder_cell = GLSTMCell(self.symmetry, width, name="decoder_cell")
        self.output_projection = GDecode(self.symmetry, self.target_vocabulary.tokens,
                                         name="output_projection")

    def _grid(self, flat):
        """(..., |G|·C) -> (..., |G|, C)."""
        shape = tf.shape(flat)
        return tf.reshape(flat, tf.concat([shape[:-1], [self.order, -1]], 0))

    def _flat(self, grid):
        shape = tf.shape(grid)
        return tf.reshape(grid, tf.concat([shape[:-2], [-1]], 0))

    def encode(self, source_ids, training=False):
        """Encoder states (B, S, |G|, 2K), their mask (B, S), the decoder's first [h, c]."""
        mask = tf.not_equal(source_ids, PAD_ID)
        embedded = self._flat(self.source_embedding(source_ids))
        # merge_mode=None: the directions are concatenated per group element below, not as
        # flat vectors (which would mix the group axis with the channels).
        forward, backward, forward_h, forward_c, backward_h, backward_c = self.encoder(
            embedded, mask=mask)
        outputs = tf.concat([self._grid(forward), self._grid(backward)], -1)
        state = [self._flat(tf.concat([self._grid(forward_h), self._grid(backward_h)], -1)),
                 self._flat(tf.concat([self._grid(forward_c), self._grid(backward_c)], -1))]
        return outputs, mask, state

    def decoder_constants(self):
        """The decoder's three tied filters, each prepared (transformed, or gathered into a
        matrix) once per sequence instead of at every step."""
        if not self.decoder_cell.built:
            width = 2 * self.hidden_units
            self.decoder_input.build((None, self.order, self.embedding_dim + width))
            self.decoder_cell.build((None, self.order * width))
            self.output_projection.build((None, self.order, width))
        return (self.decoder_input.prepare_kernel(), self.decoder_cell.prepare_kernel(),
                self.output_projection.prepare_kernel())

    def decoder_step(self, previous_ids, state, encoder_outputs, mask, training=False,
                     constants=None):
        """One decoding step -> (logits (B, V), new state, attention weights (B, S))."""
        input_kernel, cell_kernel, output_kernel = constants or self.decoder_constants()
        context, weights = self.attention(self._grid(state[0]), encoder_outputs, mask)
        embedded = self.target_embedding(previous_ids)
        mixed = tf.tanh(self.decoder_input(tf.concat([embedded, context], -1), input_kernel))
        hidden, state = self.decoder_cell(self._flat(mixed), state, prepared_kernel=cell_kernel)
        logits = self.mask_special_logits(
            self.output_projection(self._grid(hidden), output_kernel))
        return logits, state, weights

    def get_config(self):
        config = super().get_config()
        config.update({"symmetry": self.symmetry.get_config()})
        return config
