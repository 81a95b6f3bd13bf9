"""Token-level cross-entropy over padded target sequences."""

from __future__ import annotations

from keras import ops

from compgen_tf.tokens import PAD_ID


def token_cross_entropy(target_ids, logits):
    """(summed cross-entropy over the non-padding target tokens, number of those tokens)."""
    losses = ops.sparse_categorical_crossentropy(target_ids, logits, from_logits=True)
    mask = ops.cast(ops.not_equal(target_ids, PAD_ID), losses.dtype)
    return ops.sum(losses * mask), ops.sum(mask)


def masked_cross_entropy(target_ids, logits, token_count=None):
    """Token cross-entropy summed over the non-padding target positions, over `token_count`.

    `token_count` defaults to the number of those positions (the mean); a replica that holds
    a slice of a global batch passes the global batch's count, so that the replicas' losses
    (and gradients) add up to those of the whole batch.
    """
    total, count = token_cross_entropy(target_ids, logits)
    if token_count is None:
        token_count = count
    return total / ops.maximum(ops.cast(token_count, total.dtype), 1.0)
