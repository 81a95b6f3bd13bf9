"""The permutation-equivariant seq2seq backbone (Gordon et al. 2020)."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import positive_int
from compgen_tf.groups import Symmetry
from compgen_tf.layers import GAttention, GDecode, GEmbed, GLSTMCell, GroupConv
from compgen_tf.models.backbone import Backbone
from compgen_tf.models.recurrent_decoder import RecurrentDecoder


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
