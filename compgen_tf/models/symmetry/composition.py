"""Composition ("Symmetry and systematicity"): a recurrent-convolutional model and baselines.

Commands are two words (`jump four`), targets a fixed number of decoding steps,
each one of `positions` classes: the 10 actions and a padding class that ends
the sequence. `ConvolutionalEncoderDecoder` (Appendix B) treats the classes as
positions of a width-1 convolution: every operation is shared by all positions,
so a modifier learns a structure ("repeat four times") that applies to any
action, including combinations never seen in training. The baselines, an MLP
and a recurrent encoder-decoder, have no such symmetry.

References:
    "Symmetry and systematicity" (anonymous, under review), Sec. 3, Table 2 and
    Appendix B, eqs. (1)-(5).
"""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import non_negative, positive_int

ARCHITECTURES = ("convolution", "mlp", "recurrent")


@keras.saving.register_keras_serializable(package="compgen_tf")
class ConvolutionalEncoderDecoder(keras.Model):
    """Recurrent-convolutional encoder-decoder whose hidden state is `positions` x `channels`.

    Encoder, per input word w_t: g_t = h_t (+) x(w_t), the word's N-dim
    embedding appended to the N x M state as channel M + 1, then
    h_{t+1} = y(w_t) (x) g_t, a width-1 convolution whose (M + 1) x M filter is
    the word's second embedding. Decoder, from the final encoder state, for
    each output step: logits_t = f_o (x) h_t (M channels to one, one logit per
    position) and h_{t+1} = f_r (x) h_t (M channels to M). All maps are
    linear and shared by every position, so the model is equivariant to
    permutations of the positions (the output classes). An L1 penalty on both
    embedding tables is added to the loss.

    Args:
        source_vocabulary_size: number of input words (ids 0 .. size - 1).
        positions: N, the number of output classes (paper: 11 = 10 actions + pad).
        channels: M, the channels of the hidden state (paper: 5).
        output_length: decoding steps.
        l1_x, l1_y: weights of the L1 penalties on the x and y embeddings (lambda_x, lambda_y).
        **kwargs: `keras.Model` arguments.

    Call arguments:
        source_ids: int (batch, source_length) word ids.

    Returns:
        Logits (batch, output_length, positions).

    Example:
        >>> model = ConvolutionalEncoderDecoder(20, positions=11, channels=5, output_length=11)
        >>> tuple(model(np.array([[0, 13]])).shape)
        (1, 11, 11)

    References:
        "Symmetry and systematicity" (anonymous, under review), Appendix B.
    """

    def __init__(self, source_vocabulary_size: int, positions: int = 11, channels: int = 5,
                 output_length: int = 11, l1_x: float = 1e-3, l1_y: float = 1e-3, **kwargs):
        super().__init__(**kwargs)
        self.source_vocabulary_size = positive_int("source_vocabulary_size",
                                                    source_vocabulary_size)
        self.positions = positive_int("positions", positions)
        self.channels = positive_int("channels", channels)
        self.output_length = positive_int("output_length", output_length)
        self.l1_x, self.l1_y = non_negative("l1_x", l1_x), non_negative("l1_y", l1_y)
        self.x_embedding = keras.layers.Embedding(
            self.source_vocabulary_size, self.positions, name="x_embedding",
            embeddings_initializer=keras.initializers.RandomNormal(stddev=0.5),
            embeddings_regularizer=keras.regularizers.L1(self.l1_x) if self.l1_x else None)
        self.y_embedding = keras.layers.Embedding(
            self.source_vocabulary_size, (self.channels + 1) * self.channels, name="y_embedding",
            embeddings_initializer=keras.initializers.RandomNormal(stddev=0.5),
            embeddings_regularizer=keras.regularizers.L1(self.l1_y) if self.l1_y else None)

    def build(self, input_shape=None):
        if not self.x_embedding.built:
            self.x_embedding.build((None,))
            self.y_embedding.build((None,))
        self.f_o = self.add_weight(name="f_o", shape=(self.channels,),
                                   initializer=keras.initializers.RandomNormal(stddev=0.5))
        self.f_r = self.add_weight(name="f_r", shape=(self.channels, self.channels),
                                   initializer=keras.initializers.RandomNormal(stddev=0.5))

    def encode(self, source_ids):
        """The final N x M encoder state of each command."""
        x = self.x_embedding(source_ids)  # (B, S, N)
        y = ops.reshape(self.y_embedding(source_ids),
                        (-1, source_ids.shape[1], self.channels + 1, self.channels))
        h = ops.zeros((ops.shape(source_ids)[0], self.positions, self.channels), x.dtype)
        for t in range(source_ids.shape[1]):
            g = ops.concatenate([h, x[:, t, :, None]], axis=-1)  # (B, N, M + 1)
            h = ops.einsum("bnk,bkm->bnm", g, y[:, t])
        return h

    def decode(self, h):
        """Logits of every decoding step from the encoder state `h`."""
        logits = []
        for _ in range(self.output_length):
            logits.append(ops.einsum("bnm,m->bn", h, self.f_o))
            h = ops.einsum("bnm,mk->bnk", h, self.f_r)
        return ops.stack(logits, axis=1)

    def call(self, source_ids):
        if source_ids.shape[1] is None:
            raise ValueError("ConvolutionalEncoderDecoder needs a fixed source length")
        return self.decode(self.encode(ops.cast(source_ids, "int32")))

    def get_config(self):
        config = super().get_config()
        config.update({"source_vocabulary_size": self.source_vocabulary_size,
                       "positions": self.positions, "channels": self.channels,
                       "output_length": self.output_length, "l1_x": self.l1_x,
                       "l1_y": self.l1_y})
        return config


def build_composition_model(architecture: str = "convolution", source_vocabulary_size: int = 20,
                            source_length: int = 2, positions: int = 11, output_length: int = 11,
                            channels: int = 5, l1_x: float = 1e-3, l1_y: float = 1e-3,
                            units: int = 64, learning_rate: float = 0.01) -> keras.Model:
    """A compiled functional model from (batch, source_length) word ids to (batch,
    output_length, positions) logits: the convolutional encoder-decoder, an MLP over the
    one-hot words, or a recurrent encoder-decoder (LSTM encoder, its final state repeated as
    the input of an LSTM decoder)."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}; expected one of "
                         f"{ARCHITECTURES}")
    inputs = keras.Input(shape=(source_length,), dtype="int32", name="source_ids")
    if architecture == "convolution":
        logits = ConvolutionalEncoderDecoder(source_vocabulary_size, positions, channels,
                                             output_length, l1_x, l1_y,
                                             name="encoder_decoder")(inputs)
    else:
        if architecture == "mlp":
            one_hot = keras.layers.Flatten()(keras.ops.one_hot(inputs, source_vocabulary_size))
            hidden = keras.layers.Dense(units, activation="relu")(one_hot)
            logits = keras.layers.Reshape((output_length, positions))(
                keras.layers.Dense(output_length * positions)(hidden))
        else:
            embedded = keras.layers.Embedding(source_vocabulary_size, units)(inputs)
            state = keras.layers.LSTM(units)(embedded)
            decoded = keras.layers.LSTM(units, return_sequences=True)(
                keras.layers.RepeatVector(output_length)(state))
            logits = keras.layers.Dense(positions)(decoded)
    model = keras.Model(inputs, logits, name=f"composition_{architecture}")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["sparse_categorical_accuracy"])
    return model
