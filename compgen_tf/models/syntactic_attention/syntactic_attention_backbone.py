"""Syntactic Attention's backbone (Russin et al. 2019): separate streams for alignment and translation."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import non_negative, positive_int, rate
from compgen_tf.layers.syntax_shift import SyntaxShift
from compgen_tf.layers.tied_rows_embedding import TiedRowsEmbedding
from compgen_tf.layers.weight_arguments import fresh_initializer
from compgen_tf.layers.word_noise import WordNoise
from compgen_tf.models.backbone import Backbone
from compgen_tf.models.initialization import (check_weight_initialization, dense_initializers,
                                              lstm_initializers)
from compgen_tf.models.lstm_inference import bidirectional_lstm
from compgen_tf.models.syntactic_attention.syntactic_attention_decoder import (
    SyntacticAttentionDecoder)
from compgen_tf.tokens import EOS_ID, SOS_ID

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
