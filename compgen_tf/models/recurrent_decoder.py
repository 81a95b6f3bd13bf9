"""The base of the attention decoders: a layer that owns its decoding loop."""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

from compgen_tf.decoding import BLOCKED_LOGIT, GreedySampler
from compgen_tf.models.unrolling import static_steps
from compgen_tf.tokens import PAD_ID, SOS_ID, UNK_ID

# Tokens that are never a correct output; their logits get BLOCKED_LOGIT (the attention scores
# of padding positions get the same -1e9, `compgen_tf.layers.masked_attention.MASKED_SCORE`).
BLOCKED_IDS = (PAD_ID, UNK_ID, SOS_ID)


class RecurrentDecoder(keras.layers.Layer):
    """A decoder whose step reads its own previous state, run over a whole target sequence.

    Keras' `RNN` layer cannot hold these decoders: their attention reads the encoder's
    outputs at every step, and Keras 3 `RNN` passes no constants to its cell. A subclass
    defines one step; this class runs it teacher-forced over the targets (`call`, what the
    backbone and training use) and greedily through `compgen_tf.decoding.GreedySampler`
    (`greedy`, what translation and export use), so both loops are written once.

    A subclass implements:

    - `build_sublayers(memory_shapes)`: builds its sublayers (weights are made there,
      never inside the loop).
    - `initial_state(memory)`: the loop state at the first step.
    - `prepare(memory)`: tensors every step reads and none changes (tied filters, say),
      computed once per sequence; `()` by default.
    - `step(previous_ids, state, memory, constants, training)`: `(logits (batch,
      vocabulary), new state, attention (batch, source_length))`.

    and may implement, for greedy decoding only (no gradient flows through it):

    - `prepare_greedy(memory)` and `greedy_step(previous_ids, state, memory, constants)`:
      the same step computed another way, equal to `step` up to float rounding, where
      precomputing more per sequence makes each step cheaper; `prepare` and `step` by default.

    Args:
        vocabulary_size: the number of output tokens (special tokens included).
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        target_ids: int (batch, target_length): the targets, ending with `<eos>`, padded.
        memory: the encoder's outputs, as the backbone's `encode` returns them.
        training: whether dropout is active.
        teacher_forced: None (every row is fed the previous target token), or a bool
            (batch,) tensor: rows where it is False are fed their own previous argmax
            instead (scheduled sampling).

    Returns:
        logits (batch, target_length, vocabulary_size).
    """

    def __init__(self, vocabulary_size, **kwargs):
        super().__init__(**kwargs)
        self.vocabulary_size = int(vocabulary_size)
        self.sampler = GreedySampler()
        self._logit_offset = np.where(np.isin(np.arange(self.vocabulary_size), BLOCKED_IDS),
                                      BLOCKED_LOGIT, 0.0)

    def block_special_logits(self, logits):
        """`logits` with -1e9 added at `<pad>`, `<unk>` and `<sos>`."""
        return logits + ops.convert_to_tensor(self._logit_offset, logits.dtype)

    def build(self, target_ids_shape, memory_shape):
        self.build_sublayers(memory_shape)
        self.built = True

    def build_sublayers(self, memory_shapes):
        """Builds the subclass's sublayers (called once, by `build`; never inside the loop).

        Args:
            memory_shapes: the shapes of the memory tensors (`encode`'s outputs).
        """
        raise NotImplementedError

    def start_state(self, memory, lengths):
        """The loop state at the first step when each row's output length is known (the
        target's in training, the length head's in greedy decoding; None when not known).
        `initial_state(memory)` unless a decoder also reads the length."""
        return self.initial_state(memory)

    # None, or the steps per loop of greedy decoding for a decoder whose state grows with
    # the steps (`GreedySampler`'s `segment`; `greedy_state` is then sized for the first
    # loop and `grow_greedy_state` sizes it for the next).
    greedy_segment = None

    def greedy_state(self, memory, lengths, max_length):
        """The loop state at the first step of a greedy decoding of `max_length` steps:
        `start_state(memory, lengths)` unless a decoder's state depends on the number of
        steps (the Transformer's key/value cache holds one entry per step)."""
        return self.start_state(memory, lengths)

    def grow_greedy_state(self, state, steps):
        """The loop state sized for `steps` steps (with `greedy_segment`); `state` itself by
        default."""
        return state

    def initial_state(self, memory):
        """The loop state at the first step (a tensor or a nested structure of them)."""
        raise NotImplementedError

    def prepare(self, memory):
        """The tensors every step reads and none changes, computed once per sequence.

        Returns:
            A tuple, passed to `step` as `constants`; `()` by default.
        """
        return ()

    def step(self, previous_ids, state, memory, constants, training=False):
        """One decoding step.

        Args:
            previous_ids: int (batch,): the token fed at this step (`<sos>` at the first).
            state: the loop state (`initial_state`'s structure).
            memory: the encoder's outputs.
            constants: what `prepare` returned.
            training: whether dropout is active.

        Returns:
            `(logits (batch, vocabulary_size), new state, attention (batch, source_length))`.
        """
        raise NotImplementedError

    def prepare_greedy(self, memory):
        """The constants of `greedy_step`, once per sequence; `prepare(memory)` by default."""
        return self.prepare(memory)

    def greedy_step(self, previous_ids, state, memory, constants):
        """One step of greedy decoding (no gradient flows through it); `step` by default.

        A subclass may compute it another way, equal to `step` up to float rounding, where
        more work in `prepare_greedy` makes each step cheaper. Arguments and return value as
        `step`'s, `constants` being what `prepare_greedy` returned.
        """
        return self.step(previous_ids, state, memory, constants)

    def attention_length(self, memory):
        """The length of the attention axis (the source length)."""
        return ops.shape(memory[0])[1]

    def call(self, target_ids, memory, training=None, teacher_forced=None):
        constants = self.prepare(memory)
        batch, steps = ops.shape(target_ids)[0], ops.shape(target_ids)[1]
        targets_by_time = ops.transpose(ops.cast(target_ids, "int32"))

        def advance(previous, state, targets):
            """One step: its logits, the token the next step reads, the new state."""
            logits, state, _ = self.step(previous, state, memory, constants, training=training)
            following = targets
            if teacher_forced is not None:
                predicted = ops.cast(ops.argmax(logits, axis=-1), "int32")
                following = ops.where(teacher_forced, following, predicted)
            return ops.cast(logits, self.compute_dtype), following, state

        # The targets' lengths: their tokens before `<eos>`.
        lengths = ops.sum(ops.cast(ops.not_equal(target_ids, PAD_ID), "int32"), axis=1) - 1
        first = (ops.full((batch,), SOS_ID, "int32"), self.start_state(memory, lengths))
        if keras.backend.backend() == "jax":
            return self._scan(advance, first, targets_by_time)
        unrolled = static_steps(target_ids)
        if unrolled is not None:  # the length is known: the steps written out (`unrolling`)
            previous, state = first
            all_logits = []
            for t in range(unrolled):
                logits, previous, state = advance(previous, state, targets_by_time[t])
                all_logits.append(logits)
            return ops.stack(all_logits, axis=1)
        # TensorFlow (and PyTorch, whose loop is Python): a while_loop that writes each step's
        # logits in place keeps every shape static, so it also compiles under XLA.
        positions = ops.arange(steps, dtype="int32")

        def body(t, previous, state, all_logits):
            logits, following, state = advance(previous, state,
                                               ops.take(targets_by_time, t, axis=0))
            at_t = ops.reshape(ops.equal(positions, t), (1, -1, 1))
            all_logits = ops.where(at_t, ops.expand_dims(logits, 1), all_logits)
            return t + 1, following, state, all_logits

        initial = (ops.convert_to_tensor(0, "int32"), *first,
                   ops.zeros((batch, steps, self.vocabulary_size), self.compute_dtype))
        return ops.while_loop(lambda t, *_: t < steps, body, initial,
                              maximum_iterations=steps)[3]

    def _scan(self, advance, first, targets_by_time):
        """The teacher-forced loop on JAX: a scan, with the random state in its carry.

        `lax.while_loop` has no reverse-mode gradient, and under `jit` every shape is static,
        so JAX runs the steps as a scan (as Keras' own RNN does there). A step that draws
        dropout advances a seed generator, a variable: inside the scan's trace that update
        would leak, so the non-trainable variables (the seed states among them) travel in
        the carry, each step runs in a `StatelessScope` that maps them to the carry and
        every other variable of the decoder to the value it has where the loop starts
        (an enclosing scope's, such as the training step's values being differentiated: a
        scope replaces the enclosing one, it does not fall back on it), and the last values
        are assigned after.
        """
        carried = self.non_trainable_variables
        carried_ids = {id(v) for v in carried}
        # `.value` read here, outside the loop, is what the enclosing scope maps (or the
        # variable's own value when there is none).
        fixed = [(v, v.value) for v in self.variables if id(v) not in carried_ids]

        def scan_step(carry, targets):
            (previous, state), values = carry
            with keras.StatelessScope([*fixed, *zip(carried, values)]) as scope:
                logits, following, state = advance(previous, state, targets)
            updated = [scope.get_current_value(v) for v in carried]
            return ((following, state), updated), logits

        initial = (first, [v.value for v in carried])
        (_, values), logits = ops.scan(scan_step, initial, targets_by_time)
        for variable, value in zip(carried, values):
            variable.assign(value)
        return ops.transpose(logits, (1, 0, 2))

    def compute_output_spec(self, target_ids, memory, training=None, teacher_forced=None):
        return keras.KerasTensor((target_ids.shape[0], target_ids.shape[1], self.vocabulary_size),
                                 dtype=self.compute_dtype)

    def greedy(self, memory, max_length, return_attention=True, lengths=None):
        """Greedy decoding: `(ids (batch, max_length), attention (batch, max_length, S))`,
        the attention None when `return_attention` is False; with `lengths` (batch,) each
        row gets exactly that many tokens before its `<eos>` (`GreedySampler`)."""
        constants = self.prepare_greedy(memory)
        segment = (None if self.greedy_segment is None or self.greedy_segment >= max_length
                   else self.greedy_segment)
        first = max_length if segment is None else segment
        return self.sampler(
            lambda previous, state: self.greedy_step(previous, state, memory, constants),
            self.greedy_state(memory, lengths, first), ops.shape(memory[0])[0], max_length,
            attention_length=self.attention_length(memory), attention_dtype=self.compute_dtype,
            return_attention=return_attention, lengths=lengths, segment=segment,
            grow_fn=self.grow_greedy_state)

    def get_config(self):
        config = super().get_config()
        config.update({"vocabulary_size": self.vocabulary_size})
        return config
