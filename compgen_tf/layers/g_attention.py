"""`GAttention`: equivariant dot-product attention (Gordon et al. 2020, eqs. 4-5)."""

from __future__ import annotations

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="compgen_tf")
class GAttention(keras.layers.Layer):
    """Dot-product attention between functions on a group.

    beta_j = sum_g query(g) . keys_j(g), alpha = softmax_j(beta) over the unmasked
    positions, context = sum_j alpha_j keys_j. The scores are invariant and the
    context is equivariant when the query and the keys are translated together.
    No weights.

    Call arguments:
        query: (batch, |G|, K), the previous decoder state.
        keys: (batch, time, |G|, K), the encoder states (also the values).
        mask: optional (batch, time) booleans, True at real positions.

    Returns:
        (context (batch, |G|, K), weights (batch, time)).

    Example:
        >>> context, weights = GAttention()(tf.ones([2, 4, 8]), tf.ones([2, 5, 4, 8]))
        >>> context.shape, weights.shape
        (TensorShape([2, 4, 8]), TensorShape([2, 5]))

    References:
        Gordon et al. (2020), Permutation equivariant models for compositional
        generalization in language, Sec. 4.2, eqs. (4) and (5).
    """

    def call(self, query, keys, mask=None):
        scores = tf.einsum("bgk,btgk->bt", query, keys)
        if mask is not None:
            scores = tf.where(tf.cast(mask, tf.bool), scores, tf.fill(tf.shape(scores), -1e9))
        weights = tf.nn.softmax(scores, axis=-1)
        return tf.einsum("bt,btgk->bgk", weights, keys), weights
