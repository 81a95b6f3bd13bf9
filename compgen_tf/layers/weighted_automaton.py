"""`WeightedAutomaton`: a linear recurrent counter over tokens (a weighted finite automaton)."""

from __future__ import annotations

import keras
from keras import ops

from compgen_tf.arguments import positive_int
from compgen_tf.layers.weight_arguments import (fresh_initializer, set_weight_arguments,
                                              weight_arguments_config)


def _normal(stddev):
    return keras.initializers.RandomNormal(stddev=stddev)


@keras.saving.register_keras_serializable(package="compgen_tf")
class WeightedAutomaton(keras.layers.Layer):
    """Reads a token sequence with one affine map per token and returns a number.

    The state v (k values) starts at a learned v_0; each token x updates it by
    v ← A_x v + b_x, with a k × k matrix A_x = I + Δ_x and an offset b_x per token;
    the output is r · v after the last token. Padding tokens leave the state alone.
    There is no nonlinearity, so the output is a sum over the sequence of products of
    per-token factors: what a count such as an output length is when each word adds or
    multiplies (in SCAN, `thrice` triples what precedes it, `and` adds two clauses).
    A model of that shape learned from short sequences keeps computing the same
    function on longer ones, which an LSTM's squashed state does not
    (docs/research/length_generalization.md). Reading right to left (`go_backwards`, the
    default) lets a modifier set a factor before the words it applies to are read.
    Written in `keras.ops`: it runs on the TensorFlow, JAX and PyTorch backends.

    Args:
        vocabulary_size: the number of token ids (ids lie in [0, vocabulary_size)).
        state_size: k, the size of the state.
        go_backwards: read the sequence from its last token to its first.
        padding_id: the id that leaves the state unchanged (None: every id counts).
        delta_initializer: initializer of the Δ_x (default N(0, 0.01): the A_x start near
            the identity); delta_regularizer, delta_constraint: of the Δ_x (an L1 or L2
            penalty pulls each A_x towards the identity, "this token changes nothing").
        offset_regularizer, offset_constraint: of the offsets b_x. An L1 penalty here
            prefers words that scale or mix the state to words that set it to a constant:
            the two fit the same training sequences when a word has only been read in one
            context, and only the first carries over to a context where the state differs
            (docs/research/length_generalization.md, section 8). Scaling the state scales the
            offsets, and the readout can undo it, so the penalty steers the optimizer
            rather than ranking fits (section 9).
        vector_initializer: initializer of b_x, v_0 and r (default N(0, 0.1)).
        **kwargs: `keras.layers.Layer` arguments.

    Call arguments:
        token_ids: int (batch, length).

    Returns:
        (batch,) the readout r · v.

    Example:
        >>> automaton = WeightedAutomaton(vocabulary_size=10, state_size=4)
        >>> automaton(np.array([[3, 4, 5, 0, 0]])).shape
        (1,)
    """

    def __init__(self, vocabulary_size, state_size=4, go_backwards=True, padding_id=0,
                 delta_initializer=None, delta_regularizer=None, delta_constraint=None,
                 offset_regularizer=None, offset_constraint=None, vector_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self.vocabulary_size = positive_int("vocabulary_size", vocabulary_size)
        self.state_size = positive_int("state_size", state_size)
        if go_backwards not in (True, False):
            raise ValueError(f"go_backwards must be true or false, got {go_backwards!r}")
        self.go_backwards = bool(go_backwards)
        if padding_id is not None:
            if (isinstance(padding_id, bool) or not isinstance(padding_id, int)
                    or not 0 <= padding_id < self.vocabulary_size):
                raise ValueError(f"padding_id must be None or an id in [0, "
                                 f"{self.vocabulary_size}), got {padding_id!r}")
        self.padding_id = padding_id
        set_weight_arguments(
            self, delta_initializer=delta_initializer or _normal(0.01),
            delta_regularizer=delta_regularizer, delta_constraint=delta_constraint,
            offset_regularizer=offset_regularizer, offset_constraint=offset_constraint,
            vector_initializer=vector_initializer or _normal(0.1))

    def build(self, token_ids_shape):
        k = self.state_size
        self.deltas = self.add_weight(shape=(self.vocabulary_size, k, k),
                                      initializer=self.delta_initializer,
                                      regularizer=self.delta_regularizer,
                                      constraint=self.delta_constraint, name="deltas")
        # vector_initializer serves three weights: an instance each, or they would start
        # from the same numbers.
        self.offsets = self.add_weight(shape=(self.vocabulary_size, k),
                                       initializer=fresh_initializer(self.vector_initializer),
                                       regularizer=self.offset_regularizer,
                                       constraint=self.offset_constraint, name="offsets")
        self.initial_state = self.add_weight(
            shape=(k,), initializer=fresh_initializer(self.vector_initializer),
            name="initial_state")
        self.readout = self.add_weight(shape=(k,),
                                       initializer=fresh_initializer(self.vector_initializer),
                                       name="readout")

    def call(self, token_ids):
        token_ids = ops.cast(token_ids, "int32")
        dtype = self.compute_dtype
        identity = ops.eye(self.state_size, dtype=dtype)
        transitions = ops.take(ops.cast(self.deltas, dtype), token_ids, axis=0) + identity
        offsets = ops.take(ops.cast(self.offsets, dtype), token_ids, axis=0)
        if self.padding_id is None:
            counts = ops.ones(ops.shape(token_ids), dtype)
        else:
            counts = ops.cast(ops.not_equal(token_ids, self.padding_id), dtype)
        k = self.state_size
        # One tensor, time first, read by index in a loop: Keras' TensorFlow `ops.scan` fails
        # on several sequences of a length unknown when traced (inside `fit`), and stacks
        # its outputs in a TensorList that XLA refuses (the XLA-compiled serving function).
        # Each step's slice is (A_x flattened, b_x, 1 for a token or 0 for padding).
        batch, length = ops.shape(token_ids)[0], ops.shape(token_ids)[1]
        steps = ops.concatenate([ops.reshape(transitions, (batch, length, k * k)), offsets,
                                 ops.expand_dims(counts, -1)], axis=-1)
        steps = ops.transpose(steps, (1, 0, 2))

        def update(t, state):
            step = ops.take(steps, length - 1 - t if self.go_backwards else t, axis=0)
            transition = ops.reshape(step[:, :k * k], (-1, k, k))
            offset, count = step[:, k * k:k * k + k], step[:, k * k + k:]
            moved = ops.einsum("bij,bj->bi", transition, state) + offset
            return count * moved + (1 - count) * state

        initial = ops.broadcast_to(ops.cast(self.initial_state, dtype)[None, :], (batch, k))
        state = ops.fori_loop(0, length, update, initial)
        return ops.sum(state * ops.cast(self.readout, dtype), axis=-1)

    def compute_output_shape(self, token_ids_shape):
        return (token_ids_shape[0],)

    def get_config(self):
        config = super().get_config()
        config.update({
            "vocabulary_size": self.vocabulary_size,
            "state_size": self.state_size,
            "go_backwards": self.go_backwards,
            "padding_id": self.padding_id,
            **weight_arguments_config(self),
        })
        return config
