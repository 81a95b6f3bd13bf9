"""The one greedy decoding loop of the library: every model family decodes through it."""

from __future__ import annotations

from keras import ops

from compgen_tf.tokens import EOS_ID, PAD_ID, SOS_ID

# The logit of a token that must not be chosen (and the score of a position that must not be
# attended to).
BLOCKED_LOGIT = -1e9


class GreedySampler:
    """Greedy decoding: the most probable token at every step, until every row has ended.

    A model supplies one decoding step as a function; the sampler owns the loop, the
    bookkeeping of finished rows and the outputs. It is written in `keras.ops`
    (a `while_loop` whose tensors keep static shapes, so it also runs under XLA and
    inside an exported SavedModel) and stops as soon as every row has emitted `end_id`.

    Args:
        start_id: the token fed at the first step.
        end_id: the token that ends a row.
        pad_id: the token written after a row's end.

    Call arguments:
        next_fn: `next_fn(previous_ids, state) -> (logits, state, attention)`: one step
            from the previous tokens (batch,) and the loop state (any nest of tensors whose
            shapes do not change) to logits (batch, vocabulary), the next state and the
            attention weights (batch, attention_length) of the step (None when the model
            has no attention).
        state: the initial loop state.
        batch_size: rows to decode (a scalar tensor or int).
        max_length: steps to decode at most (a Python int).
        attention_length: length of the attention axis (a scalar tensor or int);
            needed when `next_fn` returns attention.
        attention_dtype: dtype of the returned attention.
        return_attention: False to keep no attention at all (the loop then carries no
            attention tensor, which serving's single-command path measures as faster);
            `attention` is then None.
        lengths: None, or int (batch,): each row then emits exactly that many tokens other
            than `end_id` and then `end_id` (a model whose length is decided apart from its
            decoder, e.g. by a `WeightedAutomaton` length head). A length of `max_length` or
            more leaves the row without `end_id`.
        segment: None (one loop of `max_length` steps), or a Python int: the steps run in
            loops of this many, `grow_fn(state, steps)` before each one, for a state whose
            size follows the steps (a key/value cache): a step then costs what the steps so
            far need, not what all `max_length` would. `state` must then be sized for
            the first `segment` steps. The outputs are those of one loop.
        grow_fn: with `segment`, `grow_fn(state, steps) -> state` sized for `steps` steps.

    Returns:
        `(ids, attention)`: ids (batch, max_length) int32 with `pad_id` after each
        row's `end_id`; attention (batch, max_length, attention_length), zero after a row's
        end and wherever the model has none.

    Example:
        >>> sampler = GreedySampler()
        >>> def next_fn(previous, state):  # always predicts <eos>
        ...     logits = ops.one_hot(ops.full_like(previous, EOS_ID), 5)
        ...     return logits, state, None
        >>> ids, _ = sampler(next_fn, state=(), batch_size=2, max_length=3)
        >>> ops.convert_to_numpy(ids).tolist()
        [[3, 0, 0], [3, 0, 0]]
    """

    def __init__(self, start_id: int = SOS_ID, end_id: int = EOS_ID, pad_id: int = PAD_ID):
        self.start_id, self.end_id, self.pad_id = int(start_id), int(end_id), int(pad_id)

    def __call__(self, next_fn, state, batch_size, max_length: int, attention_length=1,
                 attention_dtype="float32", return_attention=True, lengths=None,
                 segment=None, grow_fn=None):
        max_length = int(max_length)
        if segment is not None and (int(segment) < 1 or grow_fn is None):
            raise ValueError(f"segment must be a positive number of steps with a grow_fn, got "
                             f"segment={segment!r}, grow_fn={grow_fn!r}")
        # The steps at which each loop ends: one loop, or one per segment.
        ends = ([max_length] if segment is None else
                list(range(int(segment), max_length, int(segment))) + [max_length])
        positions = ops.arange(max_length, dtype="int32")

        def body(t, previous, state, finished, output_ids, *attention):
            logits, state, weights = next_fn(previous, state)
            if lengths is not None:
                logits = self._force_length(logits, t, lengths)
            token = ops.cast(ops.argmax(logits, axis=-1), "int32")
            token = ops.where(finished, self.pad_id, token)
            at_t = ops.expand_dims(ops.equal(positions, t), 0)
            output_ids = ops.where(at_t, ops.expand_dims(token, 1), output_ids)
            if attention and weights is not None:
                weights = ops.where(ops.expand_dims(finished, 1), ops.zeros_like(weights),
                                    weights)
                attention = (ops.where(ops.expand_dims(at_t, 2),
                                       ops.expand_dims(ops.cast(weights, attention[0].dtype), 1),
                                       attention[0]),)
            finished = ops.logical_or(finished, ops.equal(token, self.end_id))
            return (t + 1, token, state, finished, output_ids) + tuple(attention)

        outputs = (ops.convert_to_tensor(0, "int32"),
                   ops.full((batch_size,), self.start_id, "int32"), state,
                   ops.zeros((batch_size,), "bool"),
                   ops.full((batch_size, max_length), self.pad_id, "int32"))
        if return_attention:
            outputs += (ops.zeros((batch_size, max_length, attention_length), attention_dtype),)
        for index, end in enumerate(ends):
            if index:
                outputs = outputs[:2] + (grow_fn(outputs[2], end),) + outputs[3:]

            # Each loop's own condition: its last step is `end` (a Python int at trace time).
            def not_done(t, previous, state, finished, output_ids, *attention, end=end):
                return ops.logical_and(t < end, ops.logical_not(ops.all(finished)))

            outputs = ops.while_loop(not_done, body, outputs,
                                     maximum_iterations=end - (ends[index - 1] if index else 0))
        return outputs[4], (outputs[5] if return_attention else None)

    def _force_length(self, logits, t, lengths):
        """`logits` with `end_id` ruled out before each row's length and the only choice at it."""
        vocabulary = ops.shape(logits)[-1]
        is_end = ops.expand_dims(ops.equal(ops.arange(vocabulary, dtype="int32"), self.end_id), 0)
        at_end = ops.expand_dims(ops.greater_equal(t, ops.cast(lengths, "int32")), 1)
        # Ruled out: the end before the length, and everything else at it.
        ruled_out = ops.not_equal(is_end, at_end)
        return ops.where(ruled_out, ops.cast(BLOCKED_LOGIT, logits.dtype), logits)
