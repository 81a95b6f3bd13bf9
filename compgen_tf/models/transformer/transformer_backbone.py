"""`TransformerBackbone`: the Transformer encoder-decoder as a functional model."""

from __future__ import annotations

import keras

from compgen_tf.arguments import positive_int, rate
from compgen_tf.models.backbone import Backbone
from compgen_tf.layers.token_and_position_embedding import TokenAndPositionEmbedding
from compgen_tf.models.transformer.decoder import TransformerDecoder, check_positions
from compgen_tf.layers.transformer_encoder_layer import TransformerEncoderLayer


@keras.saving.register_keras_serializable(package="compgen_tf")
class TransformerBackbone(Backbone):
    """The Transformer encoder-decoder (Vaswani et al. 2017): token embeddings with positions,
    `num_layers` `TransformerEncoderLayer`s over the command, and a `TransformerDecoder` of
    `num_layers` layers that attends over the encoder's outputs.

    The options of the compositional-generalization studies are arguments: absolute
    (sinusoidal or learned) or relative positions (Shaw et al. 2018: relative keys, distance
    clipped at `max_relative_distance`, in every self-attention), shared ("universal")
    layers, and scaled embeddings (Csordás et al. 2021 compare these variants on SCAN).
    Every layer is written in `keras.ops` (`compgen_tf.layers.RelativeAttention`), so the
    backbone runs on every Keras backend; keras-hub's Transformer layers are not used
    because they import `tensorflow-text`, which needs the full `tensorflow` wheel where
    this library depends on `tensorflow-cpu`.

    Args:
        source_vocabulary_size, target_vocabulary_size: token counts, special tokens included.
        width: the model's width (d_model), a multiple of `num_heads`.
        num_layers: encoder layers, and decoder layers (the same number).
        num_heads: attention heads.
        feedforward_dim: the feed-forward networks' hidden width (d_ff).
        dropout: dropout rate on the embeddings and every residual branch.
        attention_dropout: dropout rate on the attention weights.
        positions: "sinusoidal", "learned" (absolute, added to the embeddings) or "relative".
        max_relative_distance: the relative keys' clip (with "relative").
        max_positions: the learned positions' table size (with "learned"): the longest
            command or output, in tokens, the model reads.
        universal: one encoder layer and one decoder layer, each applied `num_layers` times.
        scale_embeddings: multiply the token embeddings by sqrt(width).
        **kwargs: passed to `keras.Model` (`name`, `trainable`).

    Example:
        >>> backbone = TransformerBackbone(8, 10, width=8, num_layers=1, num_heads=2,
        ...                                feedforward_dim=16)
        >>> logits = backbone({"source_ids": np.ones((2, 5), "int32"),
        ...                    "target_ids": np.ones((2, 3), "int32")})  # (2, 3, 10)

    References:
        Vaswani et al. (2017), Attention is all you need; Shaw, Uszkoreit & Vaswani (2018),
        Self-attention with relative position representations; Dehghani et al. (2019),
        Universal Transformers; Csordás, Irie & Schmidhuber (2021), The devil is in the
        detail: simple tricks improve systematic generalization of Transformers.
    """

    def __init__(self, source_vocabulary_size, target_vocabulary_size, width=128, num_layers=3,
                 num_heads=8, feedforward_dim=256, dropout=0.1, positions="sinusoidal",
                 max_relative_distance=16, max_positions=128, universal=False,
                 scale_embeddings=True, attention_dropout=0.0, **kwargs):
        self.set_vocabulary_sizes(source_vocabulary_size, target_vocabulary_size)
        self.width = positive_int("width", width)
        self.num_layers = positive_int("num_layers", num_layers)
        self.num_heads = positive_int("num_heads", num_heads)
        self.feedforward_dim = positive_int("feedforward_dim", feedforward_dim)
        self.dropout_rate = rate("dropout", dropout)
        self.attention_dropout = rate("attention_dropout", attention_dropout)
        self.positions, self.max_positions, self.max_relative_distance = check_positions(
            positions, max_positions, max_relative_distance)
        self.universal = bool(universal)
        self.scale_embeddings = bool(scale_embeddings)
        # === Layers ===
        self.source_embedding = TokenAndPositionEmbedding(
            self.source_vocabulary_size, self.width, positions=self.positions,
            max_positions=self.max_positions, scale=self.scale_embeddings,
            name="source_embedding")
        self.source_dropout = keras.layers.Dropout(self.dropout_rate, name="source_dropout")
        distance = self.max_relative_distance if self.positions == "relative" else 0
        self.encoder_layers = [
            TransformerEncoderLayer(self.width, self.num_heads, self.feedforward_dim,
                                    dropout=self.dropout_rate, max_distance=distance,
                                    attention_dropout=self.attention_dropout,
                                    name=f"encoder_layer_{i}")
            for i in range(1 if self.universal else self.num_layers)]
        self.decoder = TransformerDecoder(
            self.target_vocabulary_size, self.width, self.num_layers, self.num_heads,
            self.feedforward_dim, dropout=self.dropout_rate, positions=self.positions,
            max_relative_distance=self.max_relative_distance, max_positions=self.max_positions,
            universal=self.universal, scale_embeddings=self.scale_embeddings,
            attention_dropout=self.attention_dropout, name="decoder")
        # === Functional model ===
        self.finish(*self.inputs_spec(), **kwargs)

    def encode(self, source_ids, training=False):
        """`(encoder_outputs (B, S, width), source_mask (B, S))`: the decoder's memory."""
        mask = self.source_mask(source_ids)
        x = self.source_dropout(self.source_embedding(source_ids), training=training)
        for layer in self.encoder_layers * (self.num_layers if self.universal else 1):
            x = layer(x, mask, training=training)
        return x, mask

    def get_config(self):
        config = super().get_config()
        config.update({"source_vocabulary_size": self.source_vocabulary_size,
                       "target_vocabulary_size": self.target_vocabulary_size,
                       "width": self.width, "num_layers": self.num_layers,
                       "num_heads": self.num_heads, "feedforward_dim": self.feedforward_dim,
                       "dropout": self.dropout_rate, "positions": self.positions,
                       "max_relative_distance": self.max_relative_distance,
                       "max_positions": self.max_positions, "universal": self.universal,
                       "scale_embeddings": self.scale_embeddings,
                       "attention_dropout": self.attention_dropout})
        return config
