"""`SyntacticAttentionDecoder`: Syntactic Attention's decoder (Russin et al. 2019)."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import positive_int
from compgen_tf.layers.masked_attention import masked_softmax
from compgen_tf.models.initialization import (check_weight_initialization, dense_initializers,
                                              lstm_initializers)
from compgen_tf.models.recurrent_decoder import RecurrentDecoder
from compgen_tf.tokens import EOS_ID, SOS_ID


@keras.saving.register_keras_serializable(package="compgen_tf")
class SyntacticAttentionDecoder(RecurrentDecoder):
    """Syntactic Attention's decoder: attention by syntax, output from semantics.

    The state is (s, h, c): the query s_{i-1} (the previous LSTM output; s_0 comes from
    the encoder) and the LSTM state. At step i: e_ij = s_{i-1}·h_j (masked at padding),
    α_i = softmax_j(e_i), c_i = Σ_j α_ij h_j, d_i = Σ_j α_ij m_j, logits_i = f(d_i)
    (f([d_i; c_i]) with `syntax_action`), s_i = LSTM(c_i). Previous outputs are never
    fed back, so teacher forcing changes nothing.

    Args:
        vocabulary_size: output tokens, special tokens included.
        units: the LSTM's units (the width of the keys h_j).
        semantic_dim: the width of the semantic values m_j.
        syntax_action: whether f also reads c_i.
        nonlinear_semantics: whether f is a two-layer network (ReLU, `semantic_dim`
            hidden units) instead of a linear map.
        end_only_boundaries: whether the values m_j carry one more channel, 1 at
            `<sos>`/`<eos>` and 0 at words, whose read-out (the attention on the
            boundaries) feeds only the `<eos>` logit, and f has no bias: an action
            can then come only from a word's semantic vector (if the words' weights
            all underflowed to 0, every action logit would be exactly 0, a tie).
        first_step_on_words: whether the first output step (the one fed `<sos>`)
            attends to the words only, never to the source's `<sos>`/`<eos>`: every
            output starts with an action, which must then come from a word.
        weight_initialization: `"keras"` (Keras' defaults) or `"pytorch"` (the
            reference code's; `compgen_tf.models.initialization`) for the LSTM cell
            and the dense layers.
        **kwargs: passed to `RecurrentDecoder`.

    Call arguments: see `RecurrentDecoder`; `memory` is `(semantics (B, S, semantic_dim, or
        semantic_dim + 1 with end_only_boundaries),
        keys (B, S, units), source_mask (B, S), first_query (B, units))`.
    """

    def __init__(self, vocabulary_size, units, semantic_dim, syntax_action=False,
                 nonlinear_semantics=False, end_only_boundaries=False,
                 first_step_on_words=False, weight_initialization="keras", **kwargs):
        super().__init__(vocabulary_size, **kwargs)
        self.weight_initialization = check_weight_initialization(weight_initialization)
        self.units = positive_int("units", units)
        self.semantic_dim = positive_int("semantic_dim", semantic_dim)
        self.syntax_action = bool(syntax_action)
        self.nonlinear_semantics = bool(nonlinear_semantics)
        self.end_only_boundaries = bool(end_only_boundaries)
        self.first_step_on_words = bool(first_step_on_words)
        if self.end_only_boundaries and (self.syntax_action or self.nonlinear_semantics):
            raise ValueError("end_only_boundaries needs the paper's linear output function "
                             "of the semantic read-out alone: syntax_action and "
                             "nonlinear_semantics must be false")
        scheme = self.weight_initialization
        self.cell = keras.layers.LSTMCell(self.units, name="decoder_cell",
                                          **lstm_initializers(self.units, scheme))
        # The read-out's width as the dense layers see it (see build_sublayers).
        readout = self.semantic_dim if self.end_only_boundaries else self.readout_dim
        self.semantic_hidden = (keras.layers.Dense(self.semantic_dim, activation="relu",
                                                   name="semantic_hidden",
                                                   **dense_initializers(readout, scheme))
                                if self.nonlinear_semantics else None)
        # Without a bias, zero semantics (a boundary, or nothing attended) give no action.
        use_bias = not self.end_only_boundaries
        self.output_projection = keras.layers.Dense(
            vocabulary_size, use_bias=use_bias, name="output_projection",
            **dense_initializers(self.semantic_dim if self.nonlinear_semantics else readout,
                                 scheme, use_bias=use_bias))

    @property
    def readout_dim(self) -> int:
        """Size of the decoder's readout: d_i, [d_i; β_i] with `end_only_boundaries` (β_i:
        the attention on the boundaries), or [d_i; c_i] with `syntax_action`."""
        return (self.semantic_dim + (1 if self.end_only_boundaries else 0)
                + (self.units if self.syntax_action else 0))

    def build_sublayers(self, memory_shapes):
        self.cell.build((None, self.units))
        readout = self.readout_dim
        if self.end_only_boundaries:
            readout = self.semantic_dim
            # (weight, bias) of the `<eos>` logit's term in β_i.
            self.end_logit = self.add_weight(shape=(2,), initializer="zeros",
                                             name="end_logit")
        if self.semantic_hidden is not None:
            self.semantic_hidden.build((None, readout))
            readout = self.semantic_dim
        self.output_projection.build((None, readout))

    def initial_state(self, memory):
        query = memory[3]
        zeros = ops.zeros_like(query)
        return [query, zeros, zeros]

    def attend(self, query, memory, previous_ids=None):
        """(readout (B, readout_dim), context c_i (B, units), attention (B, S)); with
        `first_step_on_words`, rows fed `<sos>` (`previous_ids`) skip the boundaries."""
        semantics, keys, mask, _ = memory
        if self.first_step_on_words and previous_ids is not None:
            mask = ops.logical_and(mask, ops.logical_not(ops.logical_and(
                self._source_boundaries(mask), ops.expand_dims(ops.equal(previous_ids, SOS_ID),
                                                               -1))))
        scores = ops.einsum("bd,bsd->bs", query, keys)
        weights = masked_softmax(scores, mask)
        context = ops.einsum("bs,bsd->bd", weights, keys)
        readout = ops.einsum("bs,bsd->bd", weights, semantics)
        if self.syntax_action:
            readout = ops.concatenate([readout, context], axis=-1)
        return readout, context, weights

    @staticmethod
    def _source_boundaries(mask):
        """(B, S) bool: `<sos>` (position 0) and `<eos>` (each row's last real position)."""
        following = ops.concatenate([mask[:, 1:], ops.zeros_like(mask[:, :1])], axis=1)
        last = ops.logical_and(mask, ops.logical_not(following))
        first = ops.expand_dims(ops.equal(ops.arange(ops.shape(mask)[1]), 0), 0)
        return ops.logical_or(last, first)

    def output_logits(self, readout):
        """The output function f on readouts (..., readout_dim) → masked logits (..., V)."""
        if self.end_only_boundaries:
            semantics, on_boundaries = readout[..., :-1], readout[..., -1:]
            # Cast first: a Keras variable is not a tensor on every backend.
            end_logit = ops.cast(self.end_logit, readout.dtype)
            weight, bias = end_logit[0], end_logit[1]
            end = ops.one_hot(EOS_ID, self.vocabulary_size, dtype=readout.dtype)
            return self.block_special_logits(self.output_projection(semantics)
                                             + (weight * on_boundaries + bias) * end)
        if self.semantic_hidden is not None:
            readout = self.semantic_hidden(readout)
        return self.block_special_logits(self.output_projection(readout))

    def step(self, previous_ids, state, memory, constants, training=False):
        query, h, c = state
        readout, context, weights = self.attend(query, memory, previous_ids)
        h, (_, c) = self.cell(context, [h, c])
        return self.output_logits(readout), [h, h, c], weights

    def prepare_greedy(self, memory):
        # The LSTM reads c_i = Σ_j α_ij h_j, so its input projection is W c_i = Σ_j α_ij (W h_j):
        # projecting the keys once per sequence replaces a (units × 4·units) matrix-vector
        # product per step by a (source_length × 4·units) one, which is what single-command
        # serving spends most of its time on (serving/README.md, "Latency").
        # Outside the cell's own call nothing casts its weights to the compute dtype
        # (bfloat16 under a mixed policy): cast them here, once per sequence.
        kernel, recurrent_kernel, bias = (
            ops.cast(weight, self.cell.compute_dtype)
            for weight in (self.cell.kernel, self.cell.recurrent_kernel, self.cell.bias))
        return ops.einsum("bsd,dg->bsg", memory[1], kernel), recurrent_kernel, bias

    def greedy_step(self, previous_ids, state, memory, constants):
        projected_keys, recurrent_kernel, bias = constants
        query, h, c = state
        readout, _, weights = self.attend(query, memory, previous_ids)
        z = (ops.einsum("bs,bsg->bg", weights, projected_keys)
             + ops.matmul(h, recurrent_kernel) + bias)
        # The gates as keras.layers.LSTMCell computes them (i, f, c̃, o).
        cell = self.cell
        z_i, z_f, z_c, z_o = ops.split(z, 4, axis=-1)
        c = (cell.recurrent_activation(z_f) * c
             + cell.recurrent_activation(z_i) * cell.activation(z_c))
        h = cell.recurrent_activation(z_o) * cell.activation(c)
        return self.output_logits(readout), [h, h, c], weights

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units, "semantic_dim": self.semantic_dim,
                       "syntax_action": self.syntax_action,
                       "nonlinear_semantics": self.nonlinear_semantics,
                       "end_only_boundaries": self.end_only_boundaries,
                       "first_step_on_words": self.first_step_on_words,
                       "weight_initialization": self.weight_initialization})
        return config
