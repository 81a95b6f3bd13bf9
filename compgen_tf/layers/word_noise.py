"""`WordNoise`: replaces word embeddings by noise in training (Syntactic Attention's syntax)."""

from __future__ import annotations

import numbers

import keras
from keras import ops

from compgen_tf.tokens import SPECIAL_TOKENS


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

    Returns:
        The embeddings (batch, length, features), some words' replaced when training.

    Example:
        >>> noise = WordNoise(rate=0.1, seed=1)
        >>> embedded = noise(np.ones((2, 5, 8)), np.array([[2, 4, 5, 3, 0]] * 2), training=True)

    References:
        Russin et al. (2019), Compositional generalization in a deep seq2seq model by
        separating syntax and semantics (the syntactic stream this noise regularises).
    """

    def __init__(self, rate, stddev=1.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= rate <= 1:
            raise ValueError(f"rate must be a probability in [0, 1], got {rate!r}")
        if isinstance(stddev, bool) or not isinstance(stddev, numbers.Real) or not stddev > 0:
            raise ValueError(f"stddev must be a positive number, got {stddev!r}")
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
