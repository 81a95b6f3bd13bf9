"""The `train_step` of the library's task models: the one place that computes gradients."""

from __future__ import annotations

import contextlib
import functools

import keras
import tensorflow as tf

from compgen_tf.keras_internals import SkipSymbolicBuild
from compgen_tf.models.unrolling import unrolled_recurrences

# Every `tf.function` of the library is traced without AutoGraph: its loops are written
# out as `keras.ops` / `tf` control flow (Keras does not convert its own train step either),
# and converting the decoders' Python made a process's first trace of a decoder about
# three times slower (benchmarks/decode_tracing.py), which every `train`, `evaluate` and
# `export` command pays. A tensor used as a Python condition fails loudly.
AUTOGRAPH = False


def stateless_uniform(shape, seed):
    """Draws uniform in [0, 1), a pure function of the stateless `seed` (int32, shape (2,)).

    `tf.random.stateless_uniform` on TensorFlow (the draws of every run trained there); on
    JAX the seed is the raw key of `jax.random` (other numbers, equally a function of the
    seed). The teacher-forcing draws of `train_step`.
    """
    if keras.backend.backend() == "tensorflow":
        return tf.random.stateless_uniform(shape, seed)
    return keras.random.uniform(shape, seed=keras.ops.cast(seed, "uint32"))


class TrainStep(SkipSymbolicBuild):
    """A mixin for `keras.Model` task models: `compile` settings and `train_step`.

    What it adds to Keras' own step, which a run distributed over replicas needs in order
    to change the weights exactly as one device would:

    - the loss is the summed token cross-entropy over the number of target tokens of the
      **global** batch (Keras would average per replica);
    - the gradients of all replicas are summed, then clipped to `clip_norm` (the
      optimizer's own `global_clipnorm` would clip each replica's part before the sum),
      then applied;
    - teacher-forcing draws use a stateless seed `(sampling_seed, step · replicas +
      replica)`, one stream per replica, a pure function of the step (so a resumed run
      draws what an uninterrupted one would).

    Its only metric is `loss_tracker` ("loss"), a `keras.metrics.Mean` of its own; `metrics`
    lists it, so Keras resets it at each epoch and reads the epoch logs from it.
    Under a strategy, `fit` builds only the optimizer (`compgen_tf.keras_internals`).

    A model using it implements `token_loss(data, training, seed) -> (summed loss, token
    count)` for one replica's slice of a batch. `evaluate` reports the same loss without
    dropout or feedback (`test_step`); `predict` runs `predict_ids(data)` (greedy decoding
    for the sequence models).

    `compile` arguments beyond Keras' own:
        clip_norm: global gradient-norm clip after the replicas' sum (None: no clip).
        teacher_forcing_ratio: probability that a training sequence is teacher-forced
            (models that feed their outputs back read it in `token_loss`).
        label_smoothing: the share ε of each target token's probability spread over the
            other tokens (`compgen_tf.models.losses.token_cross_entropy`; 0: none), read
            by `token_loss`.
        sampling_seed: the seed of the teacher-forcing draws.
        unroll: trace one step per padded batch shape, with the recurrences written out
            step by step (`compgen_tf.models.unrolling`; one replica only). XLA runs their
            gradients several times faster so, which pays at small batches; each new
            shape costs one more compilation, so batches should be length-bucketed.
        log_update_loss: each step's logs also hold `update_loss`, that update's own loss
            beside the epoch's mean so far (`loss`): what the library's runs log
            (`compgen_tf.training.callbacks.ModelSelection`); off, the logs are Keras' own.
    """

    # Until `compile` sets them.
    clip_norm, teacher_forcing_ratio, sampling_seed, unroll = None, 1.0, 0, False
    label_smoothing, log_update_loss = 0.0, False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Made here, before the model's own layers: Keras accepts new state only until a
        # layer is built (and a task model can be built before it is compiled). A metric's
        # variables are not among the model's weights.
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def compile(self, optimizer="adam", clip_norm=None, teacher_forcing_ratio=1.0,
                sampling_seed=0, jit_compile=False, unroll=False, label_smoothing=0.0,
                log_update_loss=False, **kwargs):
        """Keras' `compile` with no loss or metrics of Keras' own, plus the step's settings.

        Resets `loss_tracker`. The arguments beyond Keras' are described in the class
        docstring; `optimizer`, `jit_compile` and `**kwargs` go to `keras.Model.compile`.

        Raises:
            ValueError: `unroll` under more than one replica, a `clip_norm` that is not
                positive, a `teacher_forcing_ratio` outside [0, 1] or a `label_smoothing`
                outside [0, 1).
        """
        super().compile(optimizer=optimizer, jit_compile=jit_compile, **kwargs)
        # A compiled model starts from no loss, as Keras' own tracker does (it makes a new one).
        self.loss_tracker.reset_state()
        # Only TensorFlow distributes a step (JAX's models have no `distribute_strategy`).
        if (unroll and keras.backend.backend() == "tensorflow"
                and self.distribute_strategy.num_replicas_in_sync != 1):
            raise ValueError("unroll traces the step outside the strategy: it needs a "
                             "single replica, got "
                             f"{self.distribute_strategy.num_replicas_in_sync}")
        self.unroll = bool(unroll)
        if clip_norm is not None and not float(clip_norm) > 0:
            raise ValueError(f"clip_norm must be positive or None, got {clip_norm}")
        if not 0.0 <= float(teacher_forcing_ratio) <= 1.0:
            raise ValueError(f"teacher_forcing_ratio must be in [0, 1], got "
                             f"{teacher_forcing_ratio}")
        if not 0.0 <= float(label_smoothing) < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing}")
        self.label_smoothing = float(label_smoothing)
        self.log_update_loss = bool(log_update_loss)
        self.clip_norm = None if clip_norm is None else float(clip_norm)
        self.teacher_forcing_ratio = float(teacher_forcing_ratio)
        self.sampling_seed = int(sampling_seed)

    def token_loss(self, data, training=True, seed=None):
        """The loss of one replica's slice of a batch; each model implements it.

        Args:
            data: the batch (slice) as the dataset yields it.
            training: whether dropout and teacher-forcing draws are active (False in
                `test_step`).
            seed: the stateless seed of the teacher-forcing draws (`train_step`'s; None
                when not training).

        Returns:
            `(summed token cross-entropy, number of target tokens)`: summed, not averaged,
            so that `train_step` divides by the global batch's tokens.
        """
        raise NotImplementedError

    # Keras turns `jit_compile=True` off for a model holding a layer that XLA cannot compile,
    # and a task model holds its preprocessor's StringLookup tables. `train_step` reads ids
    # and never calls them, so the setting is kept as given.
    @property
    def jit_compile(self):
        """Whether the train step is compiled with XLA: as `compile` was given it on
        TensorFlow; always on JAX, where a step that is not jitted runs op by op."""
        return keras.backend.backend() == "jax" or bool(getattr(self, "_xla", False))

    @jit_compile.setter
    def jit_compile(self, value):
        self._xla = bool(value)

    @property
    def metrics(self):
        """`[loss_tracker]`: the metrics that Keras resets each epoch and logs."""
        # The loss tracker alone: the train and test steps update no other metric, and
        # Keras' own loss tracker (which `compile` also makes) is never updated.
        return [self.loss_tracker]

    # Training settings are not part of a saved model: `fit_run` compiles from the run's
    # configuration, and a loaded model translates without being compiled.
    def get_compile_config(self):
        """None: a saved model keeps no training settings."""
        return None

    def compile_from_config(self, config):
        """Does nothing: a loaded model is left uncompiled (see `get_compile_config`)."""
        pass

    def test_step(self, *args):
        """`evaluate`'s step: `token_loss` without dropout or feedback, over the global
        batch's tokens, added to `loss_tracker` weighted by them (over a dataset: the loss
        per token). Returns `{"loss": ...}` (on JAX, with the new state: `train_step`)."""
        if keras.backend.backend() == "jax":
            (trainable, non_trainable, metric_values), data = args
            mapping = [*zip(self.trainable_variables, trainable),
                       *zip(self.non_trainable_variables, non_trainable),
                       *zip(self.metrics_variables, metric_values)]
            with keras.StatelessScope(state_mapping=mapping) as scope:
                summed, tokens = self.token_loss(data, training=False)
                tokens = keras.ops.cast(tokens, summed.dtype)
                self.loss_tracker.update_state(summed / keras.ops.maximum(tokens, 1.0),
                                               sample_weight=tokens)
                logs = {"loss": self.loss_tracker.result()}
            return logs, (trainable, non_trainable,
                          _current_values(scope, self.metrics_variables, metric_values))
        (data,) = args
        context = tf.distribute.get_replica_context()
        summed, tokens = self.token_loss(data, training=False)
        summed = context.all_reduce(tf.distribute.ReduceOp.SUM, summed)
        tokens = tf.cast(context.all_reduce(tf.distribute.ReduceOp.SUM, tokens), summed.dtype)
        # Weighted by the batch's tokens: over a dataset, the loss per token.
        self.loss_tracker.update_state(summed / tf.maximum(tokens, 1.0), sample_weight=tokens)
        return {"loss": self.loss_tracker.result()}

    def predict_step(self, *args):
        """`predict`'s step: `predict_ids(data)` (on JAX `(state, data)` in, `(ids, state)`
        out: `train_step`)."""
        if keras.backend.backend() != "jax":
            (data,) = args
            return self.predict_ids(data)
        (trainable, non_trainable), data = args
        mapping = [*zip(self.trainable_variables, trainable),
                   *zip(self.non_trainable_variables, non_trainable)]
        with keras.StatelessScope(state_mapping=mapping) as scope:
            ids = self.predict_ids(data)
        return ids, _current_values(scope, self.non_trainable_variables, non_trainable)

    def predict_ids(self, data):
        """What `predict` returns for a batch (greedy output ids for the sequence models);
        each model implements it."""
        raise NotImplementedError

    def make_train_function(self, force=False):
        """Keras' train function, or with `unroll` one that traces a step per batch shape.

        The unrolled function draws each batch eagerly and runs it through a `tf.function`
        of its shape (XLA as `jit_compile` says), traced with the lengths known and the
        recurrences written out (`compgen_tf.models.unrolling.unrolled_recurrences`).
        """
        if not self.unroll or keras.backend.backend() == "jax":
            # JAX traces a jitted step for each new batch shape anyway, lengths known:
            # `jax_train_step` writes the recurrences out itself.
            return super().make_train_function(force)
        if self.train_function is not None and not force:
            return self.train_function
        # Keras traces one step for every batch shape (reduce_retracing): the lengths are
        # then unknown. Here each batch is drawn eagerly and each new shape gets a step of
        # its own, traced with its lengths known, so that the recurrences can be written out.
        steps = {}

        def train_function(iterator):
            data = next(iterator)
            shape = tuple(tuple(tensor.shape) for tensor in tf.nest.flatten(data))
            if shape not in steps:
                # Through a `partial` of its own: TensorFlow counts the traces of every
                # tf.function of one code object together and warns of "retracing" at the
                # sixth shape; one trace per shape is what is meant here.
                steps[shape] = tf.function(functools.partial(self._unrolled_train_step),
                                           jit_compile=self.jit_compile, autograph=AUTOGRAPH)
            return steps[shape](data)

        self.train_function = train_function
        return train_function

    def _unrolled_train_step(self, data):
        with unrolled_recurrences():
            return self.train_step(data)

    def train_step(self, *args):
        """One optimizer step over the global batch, as the class docstring describes.

        `token_loss` with the step's stateless seed, over the global batch's tokens, plus
        each replica's share of the layers' weight penalties; the replicas' gradients
        summed, clipped to `clip_norm`, and applied as each replica's share. Returns
        `{"loss": ...}`, the epoch's mean training loss so far (`loss_tracker`), and with
        `log_update_loss` this update's own as `"update_loss"`.

        On TensorFlow Keras calls it with the batch; on JAX with `(state, batch)` (Keras'
        JAX trainer: the variables' values in, their new values out, see `jax_train_step`).
        """
        if keras.backend.backend() == "jax":
            return self.jax_train_step(*args)
        (data,) = args
        context = tf.distribute.get_replica_context()
        replicas, replica = context.num_replicas_in_sync, context.replica_id_in_sync_group
        step = tf.cast(self.optimizer.iterations, tf.int32)
        seed = tf.stack([tf.constant(self.sampling_seed, tf.int32), step * replicas + replica])
        variables = self.trainable_variables
        with tf.GradientTape() as tape:
            summed, tokens = self.token_loss(data, training=True, seed=seed)
            global_tokens = context.all_reduce(tf.distribute.ReduceOp.SUM, tokens)
            loss = summed / tf.maximum(tf.cast(global_tokens, summed.dtype), 1.0)
            # Weight penalties declared by layers (e.g. an embeddings_regularizer); each
            # replica adds its share so that the replicas add up to one penalty.
            if self.losses:
                loss += tf.add_n(self.losses) / tf.cast(replicas, loss.dtype)
        gradients = tape.gradient(loss, variables)
        present = [i for i, g in enumerate(gradients) if g is not None]
        summed_gradients = context.all_reduce(
            tf.distribute.ReduceOp.SUM, [tf.convert_to_tensor(gradients[i]) for i in present])
        if self.clip_norm is not None:
            summed_gradients, _ = tf.clip_by_global_norm(summed_gradients, self.clip_norm)
        # The optimizer sums what every replica applies: each applies its share of the sum.
        self.optimizer.apply_gradients([(g / replicas, variables[i])
                                        for g, i in zip(summed_gradients, present)])
        update_loss = context.all_reduce(tf.distribute.ReduceOp.SUM, loss)
        # Keras reads the epoch logs from `metrics`: the mean training loss of the epoch
        # (a non-finite step makes it non-finite, which ModelSelection reports).
        self.loss_tracker.update_state(update_loss)
        logs = {"loss": self.loss_tracker.result(),
                **({"update_loss": update_loss} if self.log_update_loss else {})}
        if isinstance(tf.distribute.get_strategy(), tf.distribute.MultiWorkerMirroredStrategy):
            # Keras reduces a multi-worker step's outputs with a MEAN along axis 0, which a
            # scalar lacks: give them one, the reduction takes it away again.
            logs = {name: tf.reshape(value, [1]) for name, value in logs.items()}
        return logs

    def jax_train_step(self, state, data):
        """`train_step` on JAX: one device, the same loss, clipping and seeds as on TensorFlow.

        Keras' JAX trainer jits it and threads the variables' values through it:
        `state` is (trainable, non-trainable, optimizer, metric values) and the step
        returns `(logs, new state)`. `token_loss` runs in a `keras.StatelessScope` over
        those values (the seed generators' states among the non-trainable ones, so dropout
        streams advance as on TensorFlow); `jax.value_and_grad` differentiates it; the
        gradients are clipped to `clip_norm` by their global norm as
        `tf.clip_by_global_norm` does and applied with the optimizer's `stateless_apply`.
        The teacher-forcing seed is `(sampling_seed, step)`, one replica's seed on
        TensorFlow; JAX draws other numbers from it than TensorFlow does (different
        generators), the same ones for the same step on every run.
        """
        import jax

        trainable, non_trainable, optimizer_values, metric_values = state
        iterations = optimizer_values[_index_of(self.optimizer.variables,
                                                self.optimizer.iterations)]
        seed = keras.ops.stack([keras.ops.convert_to_tensor(self.sampling_seed, "int32"),
                                keras.ops.cast(iterations, "int32")])

        def loss_of(trainable_values):
            mapping = [*zip(self.trainable_variables, trainable_values),
                       *zip(self.non_trainable_variables, non_trainable)]
            with keras.StatelessScope(state_mapping=mapping) as scope:
                with unrolled_recurrences() if self.unroll else contextlib.nullcontext():
                    summed, tokens = self.token_loss(data, training=True, seed=seed)
                loss = summed / keras.ops.maximum(keras.ops.cast(tokens, summed.dtype), 1.0)
                if self.losses:
                    loss = loss + keras.ops.sum(keras.ops.stack(self.losses))
            return loss, _current_values(scope, self.non_trainable_variables, non_trainable)

        (loss, non_trainable), gradients = jax.value_and_grad(loss_of, has_aux=True)(trainable)
        if self.clip_norm is not None:
            norm = keras.ops.sqrt(sum(keras.ops.sum(keras.ops.square(g)) for g in gradients))
            scale = self.clip_norm / keras.ops.maximum(norm, self.clip_norm)
            gradients = [g * keras.ops.cast(scale, g.dtype) for g in gradients]
        trainable, optimizer_values = self.optimizer.stateless_apply(
            optimizer_values, gradients, trainable)
        with keras.StatelessScope(
                state_mapping=list(zip(self.metrics_variables, metric_values))) as scope:
            self.loss_tracker.update_state(loss)
            mean = self.loss_tracker.result()
        metric_values = _current_values(scope, self.metrics_variables, metric_values)
        logs = {"loss": mean, **({"update_loss": loss} if self.log_update_loss else {})}
        return logs, (trainable, non_trainable, optimizer_values, metric_values)


def _index_of(variables, variable) -> int:
    """The position of `variable` in `variables` (by identity: Keras variables compare
    their values under `==`)."""
    return next(i for i, v in enumerate(variables) if v is variable)


def _current_values(scope, variables, values):
    """The values `variables` hold at the end of the stateless `scope`: the one assigned
    in it, or the one it was given (`values`, in the same order)."""
    current = [scope.get_current_value(v) for v in variables]
    return [value if new is None else new for new, value in zip(current, values)]
