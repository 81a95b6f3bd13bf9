"""`KeyValueMemory`: the soft key-value memory of meta seq2seq learning (Lake 2019, eq. 2)."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.layers.masked_attention import masked_softmax


@keras.saving.register_keras_serializable(package="compgen_tf")
class KeyValueMemory(keras.layers.Layer):
    """Reads values by scaled dot-product attention of queries over keys.

    A = softmax(Q K^T / sqrt(m)) over the memory slots, M = A V. Padded memory
    slots get no weight; padded query rows read nothing (their weights and
    outputs are zero). In meta seq2seq, the keys and values are the encoded
    support commands and actions of an episode, the queries the per-step
    encodings of a query command. No weights; written in `keras.ops`.

    Args:
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        queries: (batch, T, m).
        keys: (batch, n, m), or (n, m): one memory shared by every row of the batch
            (an episode's support set read by each of its queries).
        values: (batch, n, d), or (n, d) with shared keys.
        query_mask: optional (batch, T) booleans, True at real query steps.
        memory_mask: optional (batch, n) booleans, True at real memory slots ((n,)
            with shared keys).

    Returns:
        (read values M (batch, T, d), attention weights A (batch, T, n)).

    Example:
        >>> memory = KeyValueMemory()
        >>> read, weights = memory(np.ones((2, 5, 8)), np.ones((2, 3, 8)), np.ones((2, 3, 4)))
        >>> read.shape, weights.shape
        ((2, 5, 4), (2, 5, 3))

    References:
        Lake (2019), Compositional generalization through meta sequence-to-sequence
        learning, NeurIPS, Sec. 3, eq. (2); Vaswani et al. (2017).
    """

    def call(self, queries, keys, values, query_mask=None, memory_mask=None):
        if queries.shape[-1] is not None and keys.shape[-1] is not None \
                and queries.shape[-1] != keys.shape[-1]:
            raise ValueError(f"queries and keys must have the same size m, got "
                             f"{queries.shape[-1]} and {keys.shape[-1]}")
        shared = len(keys.shape) == 2
        if shared != (len(values.shape) == 2):
            raise ValueError(f"keys and values must both be shared (rank 2) or both batched "
                             f"(rank 3), got ranks {len(keys.shape)} and {len(values.shape)}")
        memory = "nm" if shared else "bnm"
        scale = ops.rsqrt(ops.cast(ops.shape(keys)[-1], queries.dtype))
        scores = ops.einsum(f"btm,{memory}->btn", queries, keys) * scale
        slots = None
        if memory_mask is not None:
            memory_mask = ops.cast(memory_mask, "bool")
            if shared:
                memory_mask = memory_mask[None, :]
            slots = memory_mask[:, None, :]
        weights = masked_softmax(scores, slots)
        if memory_mask is not None:
            # A memory with no real slot reads nothing instead of a uniform average.
            weights = weights * ops.cast(ops.any(memory_mask, axis=-1), weights.dtype
                                         )[:, None, None]
        if query_mask is not None:
            weights = weights * ops.cast(query_mask, weights.dtype)[:, :, None]
        return ops.einsum(f"btn,{memory.replace('m', 'd')}->btd", weights, values), weights
