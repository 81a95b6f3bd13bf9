"""`GAttention`: equivariant dot-product attention (Gordon et al. 2020, eqs. 4-5)."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.layers.masked_attention import masked_softmax


@keras.saving.register_keras_serializable(package="compgen_tf")
class GAttention(keras.layers.Layer):
    """Dot-product attention between functions on a group.

    beta_j = sum_g query(g) . keys_j(g), alpha = softmax_j(beta) over the unmasked
    positions, context = sum_j alpha_j keys_j. The scores are invariant and the
    context is equivariant when the query and the keys are translated together.
    No weights; written in `keras.ops`.

    Args:
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        query: (batch, |G|, K), the previous decoder state.
        keys: (batch, time, |G|, K), the encoder states (also the values).
        mask: optional (batch, time) booleans, True at real positions.

    Returns:
        (context (batch, |G|, K), weights (batch, time)).

    Example:
        >>> context, weights = GAttention()(np.ones((2, 4, 8)), np.ones((2, 5, 4, 8)))
        >>> context.shape, weights.shape
        ((2, 4, 8), (2, 5))

    References:
        Gordon et al. (2020), Permutation equivariant models for compositional
        generalization in language, Sec. 4.2, eqs. (4) and (5).
    """

    def call(self, query, keys, mask=None):
        scores = ops.einsum("bgk,btgk->bt", query, keys)
        weights = masked_softmax(scores, mask)
        return ops.einsum("bt,btgk->bgk", weights, keys), weights
