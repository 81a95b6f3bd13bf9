"""Syntactic Attention (Russin et al. 2019): separate streams for alignment and translation."""

from __future__ import annotations

import keras
import tensorflow as tf

from compgen_tf.arguments import non_negative, positive_int, rate
from compgen_tf.models.seq2seq_model import Seq2SeqModel
from compgen_tf.vocabulary import EOS_ID, PAD_ID, SOS_ID, SPECIAL_TOKENS

_NEG_INF = -1e9
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
class SyntacticAttention(Seq2SeqModel):
    """Sequence-to-sequence model whose attention is driven by syntax and whose output by semantics.

    Each source token x_j (the command is always wrapped as `<sos> words <eos>`)
    gets two representations:

    - semantic: m_j = W_m x_j, a context-free embedding (`semantic_dim`);
    - syntactic: an embedding (`syntax_embedding_dim`) read by a bidirectional
      LSTM (`syntax_units` per direction), shifted so that a position never
      sees its own word, h̃_j = [→h_{j-1}; ←h_{j+1}] (the first position,
      `<sos>`, and the last real position of each row, `<eos>`, get two
      learned vectors instead), then read by a second bidirectional LSTM
      (`encoder_units` per direction) whose outputs h_j are the attention keys
      and values.

    The decoder is an LSTM of width 2·`encoder_units` whose state starts at
    zero and whose first query is s_0 = ReLU(W_0 [→h_final; ←h_final]) (the
    final states of the second bidirectional LSTM). At step i:
    e_ij = s_{i-1}·h_j (masked at padding), α_i = softmax_j(e_i),
    c_i = Σ_j α_ij h_j, d_i = Σ_j α_ij m_j, logits_i = W_out d_i + b_out,
    and s_i = LSTM(c_i, state): c_i is the decoder's only input. Previous
    outputs are never fed back, so training and greedy decoding run the
    same recurrence; `teacher_forcing_ratio` and `seed` are accepted for
    interface compatibility and ignored.

    Choices where the paper is not explicit (it states only "a linear function
    with a softmax" for f and "a dropout rate of 0.5"), made as the authors'
    reference implementation behaves:

    - dropout is applied to the two token embeddings (the semantic m_j and the
      syntactic embedding), nowhere else (no recurrent or output dropout);
    - the output map f has a bias (b_out above; a bias is context-free, so it
      does not break the separation), as has W_0;
    - the two boundary vectors replace the shifted states at `<sos>` and at
      the last non-padding position of each row, so padding never moves them.

    Ablations (paper Tables 2 and 3), all off by default:

    - `sequential_semantics`: m_j are the outputs of a bidirectional LSTM
      (`semantic_dim // 2` per direction) over the semantic embeddings, so
      they depend on the whole command;
    - `syntax_action`: logits_i = W_out [d_i; c_i] + b_out;
    - `nonlinear_semantics`: f is a two-layer network,
      logits_i = W_out ReLU(W_1 d_i + b_1) + b_out, with `semantic_dim` hidden units.

    Args:
        source_words, target_words, max_input_length, max_output_length: see
            `Seq2SeqModel`. The source is always encoded as `<sos> words <eos>`
            (a reloaded configuration's `source_starts_with_sos=True` is accepted
            and ignored; `False` is rejected).
        semantic_dim: size of the semantic vectors m_j (paper: 120).
        syntax_embedding_dim: size of the syntactic token embeddings (reference: 100).
        syntax_units: LSTM units per direction of the first, shifted, syntactic
            bidirectional LSTM (reference: 100).
        encoder_units: LSTM units per direction of the second syntactic
            bidirectional LSTM (paper: 200); the decoder LSTM has
            `decoder_units = 2 * encoder_units` (paper: 400).
        dropout: dropout rate on the embeddings (paper: 0.5).
        embeddings_initializer: initializer of the two token embeddings (and,
            unless `boundary_initializer` is given, of the learned `<sos>`/`<eos>`
            syntactic vectors), any Keras initializer identifier. Keras's
            default, "uniform", draws from U(-0.05, 0.05); PyTorch's
            `nn.Embedding`, used by the authors' code, draws from N(0, 1):
            `{"class_name": "RandomNormal", "config": {"stddev": 1.0}}`. On
            add-jump the syntactic embedding of `jump` never receives a gradient
            (it only occurs alone, and the shift hides a word from its own
            position), so it keeps its initial value.
        learned_boundary_semantics: whether `<sos>` and `<eos>` have learned
            semantic vectors (True, as in the paper's reference implementation)
            or fixed zero ones (False), so that attending to a boundary yields
            only the output bias, which comes to mean `<eos>`. On add-jump,
            where `jump` only ever occurs alone, learned boundary vectors leave
            the model free to learn "jump" → I_JUMP through a boundary (attend to
            `<sos>` or `<eos>`, whose semantic vector then encodes I_JUMP) and to
            use `jump`'s own vector for `<eos>`; such a model is perfect on train
            and validation and scores 0% on the add-jump test set. With zero
            boundary vectors the only source of I_JUMP is `jump`'s own vector.
            Measured on add-jump: with N(0, 1) boundary syntactic vectors this
            variant sat on a loss plateau (1.8 after 1,600 steps, 3 seeds);
            start them at zero, `boundary_initializer="zeros"`.
        boundary_initializer: initializer of the learned `<sos>`/`<eos>`
            syntactic vectors; None (default) uses `embeddings_initializer`.
        syntax_embeddings_initializer: initializer of the syntactic token
            embeddings only; None (default) uses `embeddings_initializer`. A word
            only ever seen alone (`jump` on add-jump) keeps its initial syntactic
            embedding, which its neighbours' keys read at test time. On add-jump,
            `walk`'s row put in `jump`'s after training lifts default.json seeds
            4 and 5 from 38.2% / 17.8% to 100% on 1,000 test commands, zeros only
            to 97.7% / 90.8% (scripts/sa_jump_syntax_swap.py): near zero is not a
            neutral verb. Measured: "uniform" (U(-0.05, 0.05)) with zero boundary
            semantics scores 75.3% / 85.1% (2 seeds); "zeros" for every row, with
            zero boundary vectors, does not train (0% validation after 2,400
            steps, 2 seeds). default.json leaves it unset, i.e. N(0, 1).
        syntax_word_noise: during training, the probability that a word's
            syntactic embedding (not `<sos>`/`<eos>`/padding) is replaced by a
            fresh draw from N(0, syntax_noise_stddev), independently per token.
            0 (default, as in the paper) disables it. The syntactic stream then
            has to infer a word's role from its context when the word's own
            vector says nothing, which is the situation of a word whose row never
            received a gradient (`jump` on add-jump, whose row is its initial
            draw). Measured on add-jump (with zero boundary semantics, rate 0.1,
            2 seeds): it does make the test score independent of `jump`'s row
            (20 redraws of the row: 16-21%, walk's row: 82%), but the context
            alone reads `jump left` as `turn left`, so it scores 0.0% and 17.0%.
        syntax_noise_stddev: standard deviation of those draws (default 1.0, the
            N(0, 1) of the reference's embedding initializer).
        syntax_embeddings_l2: coefficient of an L2 penalty on the syntactic token
            embeddings, added to the training loss (0, the default and the paper's
            setting, adds none). Under Adam even a tiny coefficient walks a row that
            gets no other gradient to zero, at about one learning rate per step and
            coordinate, while rows that the data trains keep most of their scale
            (add-jump, 1e-5: `jump`'s row ends at norm 0.000, trained rows at
            4.5-8.1 from about 10 at the N(0, 1) start). On add-jump that row is
            `jump`'s: the test score then no longer depends on its random draw (see
            `syntax_embeddings_initializer`; a zero row put in `jump`'s place after
            training scores 90.8-99.6% where random draws scatter between 13% and
            100%). configs/syntactic_attention/addprim_jump_syntax_l2.json uses 1e-5.
        sequential_semantics, syntax_action, nonlinear_semantics: the ablations above.
        **kwargs: passed to `Seq2SeqModel`.

    Call arguments (`call((source_ids, target_ids), training)`): logits
        (batch, target_length, target_vocabulary_size) of the target steps;
        `<pad>`, `<unk>` and `<sos>` get -1e9.

    Example:
        >>> model = SyntacticAttention(["jump", "twice"], ["I_JUMP"], semantic_dim=8,
        ...                            syntax_embedding_dim=8, syntax_units=8, encoder_units=8)
        >>> model.translate(["jump twice"])  # untrained: some action string
        ['...']
        >>> ids, _ = model.encode_commands(tf.constant(["jump twice"]))
        >>> model.attention_weights(ids, max_length=4)[1].shape  # (batch, steps, source)
        TensorShape([1, 4, 4])

    References:
        Russin, Jo, O'Reilly & Bengio (2019), Compositional generalization in a
        deep seq2seq model by separating syntax and semantics, arXiv:1904.09708;
        Russin, Jo, O'Reilly & Bengio (2020), Compositional generalization by
        factorizing alignment and translation, ACL SRW.
    """

    def __init__(self, source_words, target_words, semantic_dim=120, syntax_embedding_dim=100,
                 syntax_units=100, encoder_units=200, dropout=0.5, sequential_semantics=False,
                 syntax_action=False, nonlinear_semantics=False, embeddings_initializer="uniform",
                 learned_boundary_semantics=True, boundary_initializer=None,
                 syntax_embeddings_initializer=None, syntax_word_noise=0.0,
                 syntax_noise_stddev=1.0, syntax_embeddings_l2=0.0, **kwargs):
        if not kwargs.pop("source_starts_with_sos", True):
            raise ValueError("SyntacticAttention always encodes commands as <sos> words <eos>; "
                             "source_starts_with_sos=False is not supported")
        super().__init__(source_words, target_words, source_starts_with_sos=True, **kwargs)
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
        for name, value in flags.items():
            if value not in (True, False):
                raise ValueError(f"{name} must be true or false, got {value!r}")
        if sequential_semantics and self.semantic_dim % 2:
            raise ValueError("sequential_semantics splits semantic_dim between the two LSTM "
                             f"directions: semantic_dim must be even, got {semantic_dim}")
        self.decoder_units = 2 * self.encoder_units
        self.embeddings_initializer = _initializer("embeddings_initializer",
                                                   embeddings_initializer)
        self.boundary_initializer = _initializer("boundary_initializer", boundary_initializer,
                                                 default=self.embeddings_initializer)
        self.syntax_embeddings_initializer = _initializer(
            "syntax_embeddings_initializer", syntax_embeddings_initializer,
            default=self.embeddings_initializer)
        self.syntax_noise_stddev = float(syntax_noise_stddev)
        self.syntax_embeddings_l2 = non_negative("syntax_embeddings_l2", syntax_embeddings_l2)
        # Only when used, so that models saved without it keep the same variables.
        self.syntax_noise_seed = (keras.random.SeedGenerator(name="syntax_noise_seed")
                                  if self.syntax_word_noise else None)
        self.sequential_semantics = bool(sequential_semantics)
        self.syntax_action = bool(syntax_action)
        self.nonlinear_semantics = bool(nonlinear_semantics)
        self.learned_boundary_semantics = bool(learned_boundary_semantics)

        # Semantic stream.
        self.semantic_embedding = keras.layers.Embedding(
            self.source_vocabulary_size, self.semantic_dim,
            embeddings_initializer=self.embeddings_initializer, name="semantic_embedding")
        self.semantic_encoder = None
        if self.sequential_semantics:
            self.semantic_encoder = keras.layers.Bidirectional(
                keras.layers.LSTM(self.semantic_dim // 2, return_sequences=True),
                name="semantic_encoder")
        # Syntactic stream.
        self.syntax_embedding = keras.layers.Embedding(
            self.source_vocabulary_size, self.syntax_embedding_dim,
            embeddings_initializer=self.syntax_embeddings_initializer,
            embeddings_regularizer=(keras.regularizers.L2(self.syntax_embeddings_l2)
                                    if self.syntax_embeddings_l2 else None),
            name="syntax_embedding")
        self.syntax_encoder = keras.layers.Bidirectional(
            keras.layers.LSTM(self.syntax_units, return_sequences=True), name="syntax_encoder")
        self.sos_syntax = self.add_weight(shape=(2 * self.syntax_units,),
                                          initializer=self.boundary_initializer,
                                          name="sos_syntax")
        self.eos_syntax = self.add_weight(shape=(2 * self.syntax_units,),
                                          initializer=self.boundary_initializer,
                                          name="eos_syntax")
        self.encoder = keras.layers.Bidirectional(
            keras.layers.LSTM(self.encoder_units, return_sequences=True, return_state=True),
            name="encoder")
        # Decoder.
        self.initial_query = keras.layers.Dense(self.decoder_units, activation="relu",
                                                name="initial_query")
        self.decoder_cell = keras.layers.LSTMCell(self.decoder_units, name="decoder_cell")
        self.semantic_hidden = None
        if self.nonlinear_semantics:
            self.semantic_hidden = keras.layers.Dense(self.semantic_dim, activation="relu",
                                                      name="semantic_hidden")
        self.output_projection = keras.layers.Dense(self.target_vocabulary_size,
                                                    name="output_projection")
        self.dropout = keras.layers.Dropout(self.dropout_rate)

    # ----------------------------------------------------------------- encoder
    def semantic_embeddings(self, source_ids, training=False):
        """The semantic vectors m (batch, source_length, semantic_dim).

        Context-free (m_j depends on x_j only) unless `sequential_semantics`; zero at
        `<sos>` and `<eos>` unless `learned_boundary_semantics`.
        """
        semantics = self.dropout(self.semantic_embedding(source_ids), training=training)
        if self.semantic_encoder is not None:
            semantics = self.semantic_encoder(semantics, mask=tf.not_equal(source_ids, PAD_ID),
                                              training=training)
        if not self.learned_boundary_semantics:
            is_word = tf.not_equal(source_ids, SOS_ID) & tf.not_equal(source_ids, EOS_ID)
            semantics *= tf.cast(is_word, semantics.dtype)[..., None]
        return semantics

    def shifted_syntax(self, source_ids, training=False):
        """h̃ (batch, source_length, 2·syntax_units): the first syntactic biLSTM, shifted.

        h̃_j = [→h_{j-1}; ←h_{j+1}] never depends on x_j. Position 0 and the last
        non-padding position of each row hold the learned `<sos>` / `<eos>`
        vectors; padding positions are zero.
        """
        mask = tf.not_equal(source_ids, PAD_ID)
        embedded = self.syntax_embedding(source_ids)
        if training and self.syntax_noise_seed is not None:
            embedded = self._replace_with_noise(source_ids, embedded)
        embedded = self.dropout(embedded, training=training)
        states = self.syntax_encoder(embedded, mask=mask, training=training)
        forward, backward = states[..., :self.syntax_units], states[..., self.syntax_units:]
        zeros = tf.zeros_like(forward[:, :1])
        shifted = tf.concat([tf.concat([zeros, forward[:, :-1]], axis=1),
                             tf.concat([backward[:, 1:], zeros], axis=1)], axis=-1)
        lengths = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1, keepdims=True)
        positions = tf.range(tf.shape(source_ids)[1])[None, :]
        dtype = shifted.dtype
        shifted = tf.where(tf.equal(positions, lengths - 1)[..., None],
                           tf.cast(self.eos_syntax, dtype), shifted)
        shifted = tf.where(tf.equal(positions, 0)[..., None], tf.cast(self.sos_syntax, dtype),
                           shifted)
        return tf.where(mask[..., None], shifted, tf.zeros_like(shifted))

    def _replace_with_noise(self, source_ids, embedded):
        """`embedded` with each word's row replaced, with probability syntax_word_noise, by noise."""
        is_word = source_ids >= len(SPECIAL_TOKENS)
        draw = keras.random.uniform(tf.shape(source_ids), seed=self.syntax_noise_seed)
        replaced = is_word & (draw < self.syntax_word_noise)
        noise = keras.random.normal(tf.shape(embedded), stddev=self.syntax_noise_stddev,
                                    seed=self.syntax_noise_seed, dtype=embedded.dtype)
        return tf.where(replaced[..., None], noise, embedded)

    def syntax_keys(self, source_ids, training=False):
        """(h, s_0): attention keys/values h (batch, source_length, 2·encoder_units) and the
        decoder's first query s_0 (batch, decoder_units)."""
        mask = tf.not_equal(source_ids, PAD_ID)
        shifted = self.shifted_syntax(source_ids, training=training)
        keys, forward_h, _, backward_h, _ = self.encoder(shifted, mask=mask, training=training)
        return keys, self.initial_query(tf.concat([forward_h, backward_h], axis=-1))

    def encode(self, source_ids, training=False):
        """Returns (m, h, mask, s_0): semantic values, syntactic keys, source mask, first query."""
        source_ids = tf.convert_to_tensor(source_ids, tf.int32)
        semantics = self.semantic_embeddings(source_ids, training=training)
        keys, query = self.syntax_keys(source_ids, training=training)
        return semantics, keys, tf.not_equal(source_ids, PAD_ID), query

    # ----------------------------------------------------------------- decoder
    @property
    def readout_dim(self) -> int:
        """Size of the decoder's readout: d_i, or [d_i; c_i] with `syntax_action`."""
        return self.semantic_dim + (2 * self.encoder_units if self.syntax_action else 0)

    def decoder_step(self, query, state, semantics, keys, mask):
        """One step → (readout (B, readout_dim), attention (B, S), new LSTM state [h, c]).

        The new query s_i is the new state's h.
        """
        scores = tf.einsum("bd,bsd->bs", query, keys)
        weights = tf.nn.softmax(tf.where(mask, scores, tf.cast(_NEG_INF, scores.dtype)), axis=-1)
        context = tf.einsum("bs,bsd->bd", weights, keys)
        readout = tf.einsum("bs,bsd->bd", weights, semantics)
        if self.syntax_action:
            readout = tf.concat([readout, context], axis=-1)
        _, state = self.decoder_cell(context, state)
        return readout, weights, state

    def output_logits(self, readout):
        """The output function f on readouts (..., readout_dim) → masked logits (..., V)."""
        if self.semantic_hidden is not None:
            readout = self.semantic_hidden(readout)
        return self.mask_special_logits(self.output_projection(readout))

    def _initial_state(self, batch, dtype):
        zeros = tf.zeros([batch, self.decoder_units], dtype)
        return [zeros, zeros]

    def compute_logits(self, source_ids, target_ids, training=False, teacher_forcing_ratio=1.0,
                       seed=None):
        del teacher_forcing_ratio, seed  # no output feedback: nothing to force
        semantics, keys, mask, query = self.encode(source_ids, training=training)
        batch = tf.shape(keys)[0]
        steps = tf.shape(target_ids)[1]

        def body(t, query, h, c, readouts):
            readout, _, (h, c) = self.decoder_step(query, [h, c], semantics, keys, mask)
            return t + 1, h, h, c, readouts.write(t, readout)

        state = self._initial_state(batch, keys.dtype)
        readouts = tf.TensorArray(keys.dtype, size=steps,
                                  element_shape=tf.TensorShape([None, self.readout_dim]))
        _, _, _, _, readouts = tf.while_loop(lambda t, *_: t < steps, body,
                                             (0, query, state[0], state[1], readouts),
                                             maximum_iterations=steps)  # bound needed by XLA
        return self.output_logits(tf.transpose(readouts.stack(), [1, 0, 2]))

    def greedy_decode_with_attention(self, source_ids, max_length=None):
        max_length = max_length or self.max_output_length
        semantics, keys, mask, query = self.encode(source_ids)
        batch = tf.shape(keys)[0]
        positions = tf.range(max_length)

        def body(t, query, h, c, finished, output_ids, attention):
            readout, weights, (h, c) = self.decoder_step(query, [h, c], semantics, keys, mask)
            token = tf.argmax(self.output_logits(readout), axis=-1, output_type=tf.int32)
            token = tf.where(finished, PAD_ID, token)
            at_t = tf.equal(positions, t)[None, :]
            output_ids = tf.where(at_t, token[:, None], output_ids)
            attention = tf.where(at_t[:, :, None], weights[:, None, :], attention)
            return (t + 1, h, h, c, finished | tf.equal(token, EOS_ID), output_ids, attention)

        def not_done(t, query, h, c, finished, *_):
            return (t < max_length) & tf.logical_not(tf.reduce_all(finished))

        state = self._initial_state(batch, keys.dtype)
        initial = (0, query, state[0], state[1], tf.fill([batch], False),
                   tf.fill([batch, max_length], PAD_ID),
                   tf.zeros([batch, max_length, tf.shape(keys)[1]], keys.dtype))
        outputs = tf.while_loop(not_done, body, initial)
        return outputs[5], outputs[6]

    def get_config(self):
        config = super().get_config()
        config.update({
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
        })
        return config
