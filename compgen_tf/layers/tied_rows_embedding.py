"""`TiedRowsEmbedding`: an embedding whose tied rows are the mean of lender rows."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="compgen_tf")
class TiedRowsEmbedding(keras.layers.Embedding):
    """An embedding whose `tied_ids` rows are the mean of its `lender_ids` rows.

    A word that training shows in one context only (a verb only ever seen alone, as `jump`
    in SCAN's add-jump split) gets almost no gradient on its own row, so what the model
    reads for it in a new context is its initial draw. Tying replaces that row, at every
    call, by the mean of the rows of words that training does show in context; the tied
    rows' own weights stay in the table, unused. With no `tied_ids` the layer is a plain
    `keras.layers.Embedding`.

    Args:
        input_dim, output_dim: as `keras.layers.Embedding`.
        tied_ids: the ids whose rows are replaced.
        lender_ids: the ids whose mean replaces them; not empty when `tied_ids` is
            not, and disjoint from it.
        **kwargs: passed to `keras.layers.Embedding` (initializer, regularizer, name).

    Call arguments:
        inputs: int ids of any shape.

    Returns:
        The embeddings, `inputs.shape + (output_dim,)`.

    Example:
        >>> layer = TiedRowsEmbedding(5, 2, tied_ids=[4], lender_ids=[2, 3])
        >>> vectors = layer(np.array([[2, 3, 4]]))  # the row of 4 is the mean of 2's and 3's
    """

    def __init__(self, input_dim, output_dim, tied_ids=(), lender_ids=(), **kwargs):
        super().__init__(input_dim, output_dim, **kwargs)
        self.tied_ids = _id_list("tied_ids", tied_ids, self.input_dim)
        self.lender_ids = _id_list("lender_ids", lender_ids, self.input_dim)
        if self.tied_ids and not self.lender_ids:
            raise ValueError("lender_ids must not be empty when tied_ids are given")
        shared = sorted(set(self.tied_ids) & set(self.lender_ids))
        if shared:
            raise ValueError(f"an id cannot be both tied and a lender: {shared}")
        # (input_dim, 1): which rows are replaced, built once rather than at every call.
        self._is_tied = [[i in self.tied_ids] for i in range(self.input_dim)]

    def call(self, inputs):
        if not self.tied_ids:
            return super().call(inputs)
        # A tensor, not the variable: JAX's tracing refuses a variable inside `where`.
        table = ops.convert_to_tensor(self.embeddings)
        lent = ops.mean(ops.take(table, self.lender_ids, axis=0), axis=0, keepdims=True)
        table = ops.where(ops.convert_to_tensor(self._is_tied), lent, table)
        outputs = ops.take(table, ops.cast(inputs, "int32"), axis=0)
        return ops.cast(outputs, self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({"tied_ids": self.tied_ids, "lender_ids": self.lender_ids})
        return config


def _id_list(name, ids, size) -> list[int]:
    """`ids` as a sorted list of distinct ints in [0, size); a `ValueError` naming `name`."""
    ids = list(ids)
    bad = [i for i in ids if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < size]
    if bad:
        raise ValueError(f"{name} must be ids in [0, {size}), got {bad}")
    if len(set(ids)) != len(ids):
        raise ValueError(f"{name} must not repeat an id, got {ids}")
    return sorted(ids)
