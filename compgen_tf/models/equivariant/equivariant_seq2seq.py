"""Permutation-equivariant seq2seq (Gordon et al. 2020): G-LSTM encoder and decoder."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import positive_int
from compgen_tf.groups import Symmetry
from compgen_tf.layers import GAttention, GDecode, GEmbed, GLSTMCell, GroupConv
from compgen_tf.models.backbone import Backbone
from compgen_tf.models.recurrent_decoder import RecurrentDecoder
from compgen_tf.models.seq2seq_model import Seq2SeqModel


@keras.saving.register_keras_serializable(package="compgen_tf")
class EquivariantAttentionDecoder(RecurrentDecoder):
    """The G-LSTM decoder of the equivariant model, with equivariant attention.

    At each step the previous decoder state queries the encoder states (`GAttention`);
    the previous output word (`GEmbed`, output side) and the context are concatenated per
    group element and mixed by tanh(`GroupConv`), fed to a `GLSTMCell`, and `GDecode`
    gives the logits. Equivariant: translating the memory and the previous words by g
    translates the logits by g.

    Args:
        symmetry: a `compgen_tf.groups.Symmetry`.
        target_tokens: the output vocabulary's tokens (special tokens included).
        embedding_dim: channels of the word embeddings per group element.
        units: G-LSTM channels per group element (the encoder states' channels).
        **kwargs: passed to `RecurrentDecoder`.

    Call arguments: see `RecurrentDecoder`; `memory` is `(encoder_states (B, S, |G|, units),
        source_mask (B, S), [h, c])` with flat states (B, |G|·units).

    References:
        Gordon, Baroni, Bouchacourt & Lake (2020), Permutation equivariant models for
        compositional generalization in language, ICLR, Sec. 4 and Appendix B.
    """

    def __init__(self, symmetry, target_tokens, embedding_dim, units, **kwargs):
        super().__init__(len(target_tokens), **kwargs)
        self.symmetry = Symmetry.from_config(symmetry)
        self.target_tokens = list(target_tokens)
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.units = positive_int("units", units)
        self.order = self.symmetry.group.order
        self.target_embedding = GEmbed(self.symmetry, self.target_tokens, self.embedding_dim,
                                       side="output", name="target_embedding")
        self.attention = GAttention(name="attention")
        self.decoder_input = GroupConv(self.symmetry, self.units, name="decoder_input")
        self.cell = GLSTMCell(self.symmetry, self.units, name="decoder_cell")
        self.output_projection = GDecode(self.symmetry, self.target_tokens,
                                         name="output_projection")

    def build_sublayers(self, memory_shapes):
        self.target_embedding.build((None,))
        self.decoder_input.build((None, self.order, self.embedding_dim + self.units))
        self.cell.build((None, self.order * self.units))
        self.output_projection.build((None, self.order, self.units))

    def initial_state(self, memory):
        return list(memory[2])

    def prepare(self, memory):
        """The three tied filters, each prepared (transformed, or gathered into a matrix)
        once per sequence instead of at every step."""
        return (self.decoder_input.prepare_kernel(), self.cell.prepare_kernel(),
                self.output_projection.prepare_kernel())

    def step(self, previous_ids, state, memory, constants, training=False):
        encoder_states, mask, _ = memory
        input_kernel, cell_kernel, output_kernel = constants
        grid = (-1, self.order, self.units)
        context, weights = self.attention(ops.reshape(state[0], grid), encoder_states, mask)
        embedded = self.target_embedding(previous_ids)
        mixed = ops.tanh(self.decoder_input(ops.concatenate([embedded, context], -1),
                                            input_kernel))
        hidden, state = self.cell(ops.reshape(mixed, (-1, self.order * self.units)), state,
                                  prepared_kernel=cell_kernel)
        logits = self.output_projection(ops.reshape(hidden, grid), output_kernel)
        return self.block_special_logits(logits), list(state), weights

    def get_config(self):
        config = super().get_config()
        del config["vocabulary_size"]
        config.update({"symmetry": self.symmetry.get_config(),
                       "target_tokens": self.target_tokens,
                       "embedding_dim": self.embedding_dim, "units": self.units})
        return config


@keras.saving.register_keras_serializable(package="compgen_tf")
class EquivariantSeq2SeqBackbone(Backbone):
    """The equivariant model's network: `GEmbed` → bidirectional G-LSTM → G-LSTM decoder.

    Every representation is a function on the group G of `symmetry`, a (|G|, channels)
    array per token. The two encoder directions' features are concatenated per group
    element (2K channels); the decoder (`EquivariantAttentionDecoder`, 2K channels)
    starts from the encoder's final states.

    Args:
        symmetry: a `compgen_tf.groups.Symmetry` or its config.
        source_tokens, target_tokens: the vocabularies' tokens, special tokens included;
            every word the symmetry moves must be among them.
        embedding_dim: channels of the word embeddings per group element.
        hidden_units: K, G-LSTM channels of each encoder direction.
        **kwargs: passed to `keras.Model` (`name`, `trainable`).
    """

    def __init__(self, symmetry, source_tokens, target_tokens, embedding_dim=64,
                 hidden_units=64, **kwargs):
        self.symmetry = Symmetry.from_config(symmetry)
        self.source_tokens, self.target_tokens = list(source_tokens), list(target_tokens)
        self.embedding_dim = positive_int("embedding_dim", embedding_dim)
        self.hidden_units = positive_int("hidden_units", hidden_units)
        order, units = self.symmetry.group.order, self.hidden_units
        # === Layers ===
        self.source_embedding = GEmbed(self.symmetry, self.source_tokens, self.embedding_dim,
                                       side="input", name="source_embedding")
        self.flatten_groups = keras.layers.Reshape((-1, order * self.embedding_dim),
                                                   name="flatten_groups")
        # merge_mode=None: the directions are concatenated per group element, not as flat
        # vectors (which would mix the group axis with the channels).
        self.encoder = keras.layers.Bidirectional(
            keras.layers.RNN(GLSTMCell(self.symmetry, units), return_sequences=True,
                             return_state=True),
            merge_mode=None, name="encoder")
        self.sequence_grid = keras.layers.Reshape((-1, order, units), name="sequence_grid")
        # Splitting the feature axis keeps the time axis, and so the padding mask, intact.
        self.sequence_grid.supports_masking = True
        self.state_grid = keras.layers.Reshape((order, units), name="state_grid")
        self.flatten_state = keras.layers.Reshape((order * 2 * units,), name="flatten_state")
        self.decoder = EquivariantAttentionDecoder(self.symmetry, self.target_tokens,
                                                   self.embedding_dim, 2 * units, name="decoder")
        # === Functional model ===
        self.finish(*self.inputs_spec(), **kwargs)

    def encode(self, source_ids, training=False):
        """`(encoder_states (B, S, |G|, 2K), source_mask (B, S), [h, c])`, states flat."""
        mask = self.source_mask(source_ids)
        embedded = self.flatten_groups(self.source_embedding(source_ids))
        forward, backward, forward_h, forward_c, backward_h, backward_c = self.encoder(
            embedded, mask=mask)
        outputs = ops.concatenate([self.sequence_grid(forward), self.sequence_grid(backward)],
                                  -1)
        state = [self.flatten_state(ops.concatenate([self.state_grid(forward_h),
                                                     self.state_grid(backward_h)], -1)),
                 self.flatten_state(ops.concatenate([self.state_grid(forward_c),
                                                     self.state_grid(backward_c)], -1))]
        return outputs, mask, state

    def get_config(self):
        config = super().get_config()
        config.update({"symmetry": self.symmetry.get_config(),
                       "source_tokens": self.source_tokens, "target_tokens": self.target_tokens,
                       "embedding_dim": self.embedding_dim, "hidden_units": self.hidden_units})
        return config


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
