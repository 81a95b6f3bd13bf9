"""Token-level cross-entropy over padded target sequences."""

from __future__ import annotations

from keras import ops

from compgen_tf.decoding import BLOCKED_LOGIT
from compgen_tf.tokens import PAD_ID


def token_cross_entropy(target_ids, logits, label_smoothing=0.0):
    """(summed cross-entropy over the non-padding target tokens, number of those tokens).

    With `label_smoothing` ε > 0 each token's target is (1 - ε) on the right token plus ε
    spread evenly over the tokens a model can emit (Szegedy et al. 2016): the loss is
    (1 - ε)·(-log p_target) + ε·mean(-log p) over those tokens. The tokens whose logit a
    decoder blocks (`BLOCKED_LOGIT`: `<pad>`, `<unk>`, `<sos>`) are left out of the mean:
    their log-probability is about -1e9, and a target that gave them a share could never
    be reached.
    """
    losses = ops.sparse_categorical_crossentropy(target_ids, logits, from_logits=True)
    if label_smoothing:
        log_probabilities = ops.log_softmax(logits, axis=-1)
        allowed = ops.cast(logits > BLOCKED_LOGIT / 2, log_probabilities.dtype)
        uniform = -ops.sum(log_probabilities * allowed, axis=-1) / ops.maximum(
            ops.sum(allowed, axis=-1), 1.0)
        losses = (1.0 - label_smoothing) * losses + label_smoothing * ops.cast(uniform,
                                                                              losses.dtype)
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
