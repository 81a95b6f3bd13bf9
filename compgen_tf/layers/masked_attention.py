"""`masked_softmax`: the attention weights of every attention layer and decoder in the library."""

from __future__ import annotations

from keras import ops

# The score a masked position gets before the softmax. Finite, not -inf: a row with no real
# position then gets uniform weights rather than NaNs (exp(-inf - -inf)), and a score of -1e9
# is exactly representable in float32 and rounds to a finite bfloat16 number. exp(-1e9 - s) is
# exactly 0 in float32 for any score s a network produces, so real positions share all the weight.
MASKED_SCORE = -1e9


def masked_softmax(scores, mask=None, axis=-1):
    """Softmax of attention scores over `axis`, masked positions taking no part.

    Masked scores are replaced (not offset) by `MASKED_SCORE` in the scores' own dtype,
    then `keras.ops.softmax` runs over `axis`. Masked positions therefore get exactly zero
    weight as long as one position of the row is real; in a row where every position is
    masked all scores are equal and every position gets weight 1/n (callers that want such a
    row to read nothing multiply the weights by `ops.any(mask, axis)` afterwards, as
    `KeyValueMemory` does).

    `keras.ops.dot_product_attention` is not used: it also computes the scores and the
    weighted sum (which differ from one caller to the next here: scaled or not, a count term
    added, two value tensors read with the same weights), and its backends mask differently.

    Args:
        scores: float attention scores, e.g. (batch, source_length) or
            (batch, target_length, source_length).
        mask: optional booleans (or 0/1) broadcastable to `scores`, True at real positions;
            None: a plain softmax.
        axis: the axis the weights sum to one over.

    Returns:
        The attention weights, of the shape and dtype of `scores`.

    Example:
        >>> weights = masked_softmax(np.array([[1.0, 2.0, 3.0]], "float32"),
        ...                          np.array([[True, True, False]]))
        >>> keras.ops.convert_to_numpy(weights)
        array([[0.26894143, 0.73105854, 0.        ]], dtype=float32)
    """
    if mask is not None:
        scores = ops.where(ops.cast(mask, "bool"), scores, ops.cast(MASKED_SCORE, scores.dtype))
    return ops.softmax(scores, axis=axis)
