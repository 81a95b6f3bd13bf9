"""Syntactic Attention's backbone (Russin et al. 2019): separate streams for alignment and translation."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import non_negative, positive_int, rate
from compgen_tf.layers.weight_arguments import fresh_initializer
from compgen_tf.models.backbone import Backbone
from compgen_tf.models.initialization import (check_weight_initialization, dense_initializers,
                                              lstm_initializers)
from compgen_tf.models.lstm_inference import bidirectional_lstm
from compgen_tf.models.recurrent_decoder import BLOCKED_LOGIT, RecurrentDecoder
from compgen_tf.tokens import EOS_ID, PAD_ID, SOS_ID, SPECIAL_TOKENS

_FLAGS = ("sequential_semantics", "syntax_action", "nonlinear_semantics")


def _initializer(name, identifier, default=None):
    """A Keras initializer from `identifier` (None gives `default`); errors name the argument."""
    if identifier is None:
        return default
    try:
        return keras.initializers.get(identifier)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None


@keras.saving.register_keras_serializable(package="compgen_tf")
class SyntaxShift(keras.layers.Layer):
    """Shifts a bidirectional LSTM's states so that no position sees its own word.

    h̃_j = [→h_{j-1}; ←h_{j+1}]; position 0 (`<sos>`) and the last non-padding position of
    each row (`<eos>`) hold two learned vectors instead, and padding positions are zero.

    Args:
        units: LSTM units per direction (the states have 2·units features).
        boundary_initializer: initializer of the two boundary vectors.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        states: (batch, length, 2·units), forward then backward features.
        source_ids: int (batch, length), `<pad>` after each row.

    Returns:
        The shifted states (batch, length, 2·units).
    """

    def __init__(self, units, boundary_initializer="uniform", **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True  # positions are kept: the padding mask still holds
        self.units = positive_int("units", units)
        self.boundary_initializer = keras.initializers.get(boundary_initializer)

    def build(self, states_shape, source_ids_shape):
        # Two independent draws (one shared instance would give both the same vector).
        self.sos_syntax = self.add_weight(shape=(2 * self.units,),
                                          initializer=fresh_initializer(self.boundary_initializer),
                                          name="sos_syntax")
        self.eos_syntax = self.add_weight(shape=(2 * self.units,),
                                          initializer=fresh_initializer(self.boundary_initializer),
                                          name="eos_syntax")

    def call(self, states, source_ids):
        mask = ops.not_equal(source_ids, PAD_ID)
        forward, backward = states[..., :self.units], states[..., self.units:]
        zeros = ops.zeros_like(forward[:, :1])
        shifted = ops.concatenate([ops.concatenate([zeros, forward[:, :-1]], axis=1),
                                   ops.concatenate([backward[:, 1:], zeros], axis=1)], axis=-1)
        lengths = ops.sum(ops.cast(mask, "int32"), axis=1, keepdims=True)
        positions = ops.expand_dims(ops.arange(ops.shape(source_ids)[1], dtype="int32"), 0)
        dtype = shifted.dtype
        shifted = ops.where(ops.expand_dims(ops.equal(positions, lengths - 1), -1),
                            ops.cast(self.eos_syntax, dtype), shifted)
        shifted = ops.where(ops.expand_dims(ops.equal(positions, 0), -1),
                            ops.cast(self.sos_syntax, dtype), shifted)
        return ops.where(ops.expand_dims(mask, -1), shifted, ops.zeros_like(shifted))

    def compute_output_shape(self, states_shape, source_ids_shape):
        return states_shape

    def get_config(self):
        config = super().get_config()
        config.update({"units": self.units, "boundary_initializer":
                       keras.initializers.serialize(self.boundary_initializer)})
        return config


@keras.saving.register_keras_serializable(package="compgen_tf")
class WordNoise(keras.layers.Layer):
    """During training, replaces each word's embedding, with probability `rate`, by noise.

    Only words are touched (ids from `len(SPECIAL_TOKENS)` on): never `<sos>`, `<eos>`
    or padding. The noise is drawn from N(0, `stddev`), independently per token.

    Args:
        rate: the replacement probability.
        stddev: standard deviation of the noise.
        seed: seed of the layer's random stream.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        embedded: (batch, length, features).
        source_ids: int (batch, length).
        training: the noise is applied only when True.
    """

    def __init__(self, rate, stddev=1.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        self.rate = float(rate)
        self.stddev = float(stddev)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed, name="syntax_noise_seed")

    def call(self, embedded, source_ids, training=None):
        if not training:
            return embedded
        is_word = source_ids >= len(SPECIAL_TOKENS)
        draw = keras.random.uniform(ops.shape(source_ids), seed=self.seed_generator)
        replaced = ops.logical_and(is_word, draw < self.rate)
        noise = keras.random.normal(ops.shape(embedded), stddev=self.stddev,
                                    seed=self.seed_generator, dtype=embedded.dtype)
        return ops.where(ops.expand_dims(replaced, -1), noise, embedded)

    def compute_output_shape(self, embedded_shape, source_ids_shape):
        return embedded_shape

    def get_config(self):
        config = super().get_config()
        config.update({"rate": self.rate, "stddev": self.stddev, "seed": self.seed})
        return config


@keras.saving.register_keras_serializable(package="compgen_tf")
class TiedRowsEmbedding(keras.layers.Embedding):
    """An embedding whose `tied_ids` rows are the mean of its `lender_ids` rows.

    A word that training shows in one context only (a verb only ever seen alone, as `jump`
    in SCAN's add-jump split) gets almost no gradient on its own row, so what the model
    reads for it in a new context is its initial draw. Tying replaces that row, at every
    call, by the mean of the rows of words that training does show in context; the tied
    rows' own weights stay in the table, unused. With no `tied_ids` the layer is a plain
    `keras.layers.Embedding`.

    Args:
        input_dim, output_dim: as `keras.layers.Embedding`.
        tied_ids: the ids whose rows are replaced.
        lender_ids: the ids whose mean replaces them; not empty when `tied_ids` is
            not, and disjoint from it.
        **kwargs: passed to `keras.layers.Embedding` (initializer, regularizer, name).

    Call arguments:
        inputs: int ids of any shape.

    Returns:
        The embeddings, `inputs.shape + (output_dim,)`.

    Example:
        >>> layer = TiedRowsEmbedding(5, 2, tied_ids=[4], lender_ids=[2, 3])
        >>> vectors = layer(np.array([[2, 3, 4]]))  # the row of 4 is the mean of 2's and 3's
    """

    def __init__(self, input_dim, output_dim, tied_ids=(), lender_ids=(), **kwargs):
        super().__init__(input_dim, output_dim, **kwargs)
        self.tied_ids = _id_list("tied_ids", tied_ids, self.input_dim)
        self.lender_ids = _id_list("lender_ids", lender_ids, self.input_dim)
        if self.tied_ids and not self.lender_ids:
            raise ValueError("lender_ids must not be empty when tied_ids are given")
        shared = sorted(set(self.tied_ids) & set(self.lender_ids))
        if shared:
            raise ValueError(f"an id cannot be both tied and a lender: {shared}")
        # (input_dim, 1): which rows are replaced, built once rather than at every call.
        self._is_tied = [[i in self.tied_ids] for i in range(self.input_dim)]

    def call(self, inputs):
        if not self.tied_ids:
            return super().call(inputs)
        # A tensor, not the variable: JAX's tracing refuses a variable inside `where`.
        table = ops.convert_to_tensor(self.embeddings)
        lent = ops.mean(ops.take(table, self.lender_ids, axis=0), axis=0, keepdims=True)
        table = ops.where(ops.convert_to_tensor(self._is_tied), lent, table)
        outputs = ops.take(table, ops.cast(inputs, "int32"), axis=0)
        return ops.cast(outputs, self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"tied_ids": self.tied_ids, "lender_ids": self.lender_ids})
        return config


def _id_list(name, ids, size) -> list[int]:
    """`ids` as a sorted list of distinct ints in [0, size); a `ValueError` naming `name`."""
    ids = list(ids)
    bad = [i for i in ids if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < size]
    if bad:
        raise ValueError(f"{name} must be ids in [0, {size}), got {bad}")
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name} must not repeat an id, got {ids}")
    return sorted(ids)


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
        weights = ops.softmax(ops.where(mask, scores, ops.cast(BLOCKED_LOGIT, scores.dtype)),
                              axis=-1)
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


@keras.saving.register_keras_serializable(package="compgen_tf")
class SyntacticAttentionBackbone(Backbone):
    """Syntactic Attention's network: a semantic and a syntactic stream, and their decoder.

    The streams and every argument are described in `SyntacticAttention`, the task model
    that builds this backbone from its vocabularies; the arguments are the same apart from
    the vocabulary sizes, which count special tokens.

    Args:
        source_vocabulary_size, target_vocabulary_size: token counts.
        semantic_dim, syntax_embedding_dim, syntax_units, encoder_units, dropout,
            sequential_semantics, syntax_action, nonlinear_semantics,
            embeddings_initializer, learned_boundary_semantics, boundary_initializer,
            syntax_embeddings_initializer, syntax_word_noise, syntax_noise_stddev,
            syntax_embeddings_l2, end_only_boundaries, first_step_on_words,
            weight_initialization: see `SyntacticAttention`.
        syntax_tied_ids, syntax_lender_ids: ids of `SyntacticAttention`'s
            `syntax_tied_words` and `syntax_lender_words` (`TiedRowsEmbedding`).
        **kwargs: passed to `keras.Model` (`name`, `trainable`).
    """

    def __init__(self, source_vocabulary_size, target_vocabulary_size, semantic_dim=120,
                 syntax_embedding_dim=100, syntax_units=100, encoder_units=200, dropout=0.5,
                 sequential_semantics=False, syntax_action=False, nonlinear_semantics=False,
                 embeddings_initializer="uniform", learned_boundary_semantics=True,
                 boundary_initializer=None, syntax_embeddings_initializer=None,
                 syntax_word_noise=0.0, syntax_noise_stddev=1.0, syntax_embeddings_l2=0.0,
                 end_only_boundaries=False, first_step_on_words=False,
                 weight_initialization="keras", syntax_tied_ids=(), syntax_lender_ids=(),
                 **kwargs):
        self.set_vocabulary_sizes(source_vocabulary_size, target_vocabulary_size)
        self.semantic_dim = positive_int("semantic_dim", semantic_dim)
        self.syntax_embedding_dim = positive_int("syntax_embedding_dim", syntax_embedding_dim)
        self.syntax_units = positive_int("syntax_units", syntax_units)
        self.encoder_units = positive_int("encoder_units", encoder_units)
        self.dropout_rate = rate("dropout", dropout)
        self.syntax_word_noise = rate("syntax_word_noise", syntax_word_noise)
        if not float(syntax_noise_stddev) > 0.0:
            raise ValueError(f"syntax_noise_stddev must be positive, got {syntax_noise_stddev}")
        flags = dict(zip(_FLAGS, (sequential_semantics, syntax_action, nonlinear_semantics)))
        flags["learned_boundary_semantics"] = learned_boundary_semantics
        flags["end_only_boundaries"] = end_only_boundaries
        flags["first_step_on_words"] = first_step_on_words
        for name, value in flags.items():
            if value not in (True, False):
                raise ValueError(f"{name} must be true or false, got {value!r}")
        if end_only_boundaries and learned_boundary_semantics:
            raise ValueError("end_only_boundaries gives <sos> and <eos> no semantic vector: "
                             "set learned_boundary_semantics to false with it")
        if sequential_semantics and self.semantic_dim % 2:
            raise ValueError("sequential_semantics splits semantic_dim between the two LSTM "
                             f"directions: semantic_dim must be even, got {semantic_dim}")
        self.decoder_units = 2 * self.encoder_units
        self.weight_initialization = check_weight_initialization(weight_initialization)
        scheme = self.weight_initialization
        self.embeddings_initializer = _initializer("embeddings_initializer",
                                                   embeddings_initializer)
        self.boundary_initializer = _initializer("boundary_initializer", boundary_initializer,
                                                 default=self.embeddings_initializer)
        self.syntax_embeddings_initializer = _initializer(
            "syntax_embeddings_initializer", syntax_embeddings_initializer,
            default=self.embeddings_initializer)
        self.syntax_noise_stddev = float(syntax_noise_stddev)
        self.syntax_embeddings_l2 = non_negative("syntax_embeddings_l2", syntax_embeddings_l2)
        self.sequential_semantics = bool(sequential_semantics)
        self.syntax_action = bool(syntax_action)
        self.nonlinear_semantics = bool(nonlinear_semantics)
        self.learned_boundary_semantics = bool(learned_boundary_semantics)
        self.end_only_boundaries = bool(end_only_boundaries)
        self.first_step_on_words = bool(first_step_on_words)

        # === Layers ===
        # Semantic stream.
        self.semantic_embedding = keras.layers.Embedding(
            self.source_vocabulary_size, self.semantic_dim,
            embeddings_initializer=fresh_initializer(self.embeddings_initializer),
            name="semantic_embedding")
        self.semantic_dropout = keras.layers.Dropout(self.dropout_rate, name="semantic_dropout")
        # Keras' Bidirectional copies the layer it wraps by serializing it. Inside
        # `load_model`'s object-sharing scope, a wrapped LSTM freed after one Bidirectional
        # can pass its id on to the next one's, which is then handed the first one's copy
        # ("Forward layer and backward layer should have different `go_backwards`", seen
        # once in the suite). The wrapped LSTMs therefore live until every copy is made.
        semantic_lstm = (keras.layers.LSTM(self.semantic_dim // 2, return_sequences=True,
                                           **lstm_initializers(self.semantic_dim // 2, scheme))
                         if self.sequential_semantics else None)
        syntax_lstm = keras.layers.LSTM(self.syntax_units, return_sequences=True,
                                        **lstm_initializers(self.syntax_units, scheme))
        encoder_lstm = keras.layers.LSTM(self.encoder_units, return_sequences=True,
                                         return_state=True,
                                         **lstm_initializers(self.encoder_units, scheme))
        self.semantic_encoder = None
        if self.sequential_semantics:
            self.semantic_encoder = keras.layers.Bidirectional(semantic_lstm,
                                                               name="semantic_encoder")
        # Syntactic stream.
        # A plain Embedding unless rows are tied: a `.keras` file keys its weights by the
        # layer's class, so models saved before tying existed keep loading.
        embedding_arguments = dict(
            # Not the semantic table's numbers again (the same initializer by default).
            embeddings_initializer=fresh_initializer(self.syntax_embeddings_initializer),
            embeddings_regularizer=(keras.regularizers.L2(self.syntax_embeddings_l2)
                                    if self.syntax_embeddings_l2 else None),
            name="syntax_embedding")
        if syntax_tied_ids:
            self.syntax_embedding = TiedRowsEmbedding(
                self.source_vocabulary_size, self.syntax_embedding_dim,
                tied_ids=syntax_tied_ids, lender_ids=syntax_lender_ids, **embedding_arguments)
        else:
            if syntax_lender_ids:
                raise ValueError("syntax_lender_ids given without syntax_tied_ids")
            self.syntax_embedding = keras.layers.Embedding(
                self.source_vocabulary_size, self.syntax_embedding_dim, **embedding_arguments)
        # Only when used, so that models without it keep the same variables.
        self.syntax_noise = (WordNoise(self.syntax_word_noise, self.syntax_noise_stddev,
                                       name="syntax_noise")
                             if self.syntax_word_noise else None)
        self.syntax_dropout = keras.layers.Dropout(self.dropout_rate, name="syntax_dropout")
        self.syntax_encoder = keras.layers.Bidirectional(syntax_lstm, name="syntax_encoder")
        self.syntax_shift = SyntaxShift(self.syntax_units, self.boundary_initializer,
                                        name="syntax_shift")
        self.encoder = keras.layers.Bidirectional(encoder_lstm, name="encoder")
        # Reads both directions' last states: 2 * encoder_units = decoder_units inputs.
        self.initial_query = keras.layers.Dense(self.decoder_units, activation="relu",
                                                name="initial_query",
                                                **dense_initializers(self.decoder_units, scheme))
        self.decoder = SyntacticAttentionDecoder(
            self.target_vocabulary_size, self.decoder_units, self.semantic_dim,
            syntax_action=self.syntax_action, nonlinear_semantics=self.nonlinear_semantics,
            end_only_boundaries=self.end_only_boundaries,
            first_step_on_words=self.first_step_on_words,
            weight_initialization=self.weight_initialization, name="decoder")
        # === Functional model ===
        self.finish(*self.inputs_spec(), **kwargs)

    def semantic_embeddings(self, source_ids, training=False):
        """The semantic vectors m (batch, source_length, semantic_dim; + 1 with
        `end_only_boundaries`).

        Context-free (m_j depends on x_j only) unless `sequential_semantics`; zero at
        `<sos>` and `<eos>` unless `learned_boundary_semantics`. With `end_only_boundaries`
        one more channel, 1 at `<sos>`/`<eos>` and 0 elsewhere (semantic_dim + 1 in all).
        """
        semantics = self.semantic_dropout(self.semantic_embedding(source_ids), training=training)
        if self.semantic_encoder is not None:
            semantics = bidirectional_lstm(self.semantic_encoder, semantics,
                                           self.source_mask(source_ids), training=training)
        if not self.learned_boundary_semantics:
            is_word = ops.logical_and(ops.not_equal(source_ids, SOS_ID),
                                      ops.not_equal(source_ids, EOS_ID))
            semantics = semantics * ops.expand_dims(ops.cast(is_word, semantics.dtype), -1)
        if self.end_only_boundaries:
            is_boundary = ops.logical_or(ops.equal(source_ids, SOS_ID),
                                         ops.equal(source_ids, EOS_ID))
            semantics = ops.concatenate(
                [semantics, ops.expand_dims(ops.cast(is_boundary, semantics.dtype), -1)], -1)
        return semantics

    def shifted_syntax(self, source_ids, training=False):
        """h̃ (batch, source_length, 2·syntax_units): the first syntactic biLSTM, shifted
        (`SyntaxShift`)."""
        embedded = self.syntax_embedding(source_ids)
        if self.syntax_noise is not None:
            embedded = self.syntax_noise(embedded, source_ids, training=training)
        embedded = self.syntax_dropout(embedded, training=training)
        states = bidirectional_lstm(self.syntax_encoder, embedded, self.source_mask(source_ids),
                                    training=training)
        return self.syntax_shift(states, source_ids)

    def syntax_keys(self, source_ids, training=False):
        """(h, s_0): attention keys/values h (batch, source_length, 2·encoder_units) and the
        decoder's first query s_0 (batch, decoder_units)."""
        shifted = self.shifted_syntax(source_ids, training=training)
        keys, forward_h, _, backward_h, _ = bidirectional_lstm(
            self.encoder, shifted, self.source_mask(source_ids), training=training)
        return keys, self.initial_query(ops.concatenate([forward_h, backward_h], axis=-1))

    def encode(self, source_ids, training=False):
        """`(m, h, source_mask, s_0)`: semantic values, syntactic keys, mask, first query."""
        semantics = self.semantic_embeddings(source_ids, training=training)
        keys, query = self.syntax_keys(source_ids, training=training)
        return semantics, keys, self.source_mask(source_ids), query

    def get_config(self):
        config = super().get_config()
        config.update({
            "source_vocabulary_size": self.source_vocabulary_size,
            "target_vocabulary_size": self.target_vocabulary_size,
            **self.model_arguments(),
        })
        return config

    def model_arguments(self) -> dict:
        """The constructor arguments other than the vocabulary sizes."""
        return {
            "semantic_dim": self.semantic_dim,
            "syntax_embedding_dim": self.syntax_embedding_dim,
            "syntax_units": self.syntax_units,
            "encoder_units": self.encoder_units,
            "dropout": self.dropout_rate,
            "sequential_semantics": self.sequential_semantics,
            "syntax_action": self.syntax_action,
            "nonlinear_semantics": self.nonlinear_semantics,
            "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
            "learned_boundary_semantics": self.learned_boundary_semantics,
            "boundary_initializer": keras.initializers.serialize(self.boundary_initializer),
            "syntax_embeddings_initializer": keras.initializers.serialize(
                self.syntax_embeddings_initializer),
            "syntax_word_noise": self.syntax_word_noise,
            "syntax_noise_stddev": self.syntax_noise_stddev,
            "syntax_embeddings_l2": self.syntax_embeddings_l2,
            "end_only_boundaries": self.end_only_boundaries,
            "first_step_on_words": self.first_step_on_words,
            "weight_initialization": self.weight_initialization,
            "syntax_tied_ids": getattr(self.syntax_embedding, "tied_ids", []),
            "syntax_lender_ids": getattr(self.syntax_embedding, "lender_ids", []),
        }
