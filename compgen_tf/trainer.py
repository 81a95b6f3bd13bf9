"""The training loop shared by the sequence-to-sequence models: resumable, validated, logged."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from compgen_tf.config import check_learning_rate_schedule
from compgen_tf.data import EncodedSplit, epoch_batches, gather_batch
from compgen_tf.distribute import separate_dropout_streams
from compgen_tf.evaluation import evaluate_split
from compgen_tf.vocabulary import EOS_ID, PAD_ID

BEST_MODEL = "best_model.keras"


def masked_cross_entropy(target_ids, logits, token_count=None):
    """Token cross-entropy summed over the non-padding target positions, over `token_count`.

    `token_count` defaults to the number of those positions (the mean); a replica that holds
    a slice of a global batch passes the global batch's count, so that the replicas' losses
    (and gradients) add up to those of the whole batch.
    """
    losses = tf.keras.losses.sparse_categorical_crossentropy(target_ids, logits, from_logits=True)
    mask = tf.cast(tf.not_equal(target_ids, PAD_ID), losses.dtype)
    if token_count is None:
        token_count = tf.reduce_sum(mask)
    return tf.reduce_sum(losses * mask) / tf.maximum(tf.cast(token_count, losses.dtype), 1.0)


def pad_to_replicas(source, target, replicas: int):
    """Pads a batch with empty examples up to a multiple of `replicas` rows.

    An empty example is the empty command (`<eos>` alone) with an all-`<pad>` target: it adds
    no loss and no gradient, so each replica gets an equal, non-empty slice (Keras RNNs
    reject zero-row batches) without changing the step.
    """
    missing = -len(source) % replicas
    if not missing:
        return source, target
    empty_source = np.full((missing, source.shape[1]), PAD_ID, source.dtype)
    empty_source[:, 0] = EOS_ID
    empty_target = np.full((missing, target.shape[1]), PAD_ID, target.dtype)
    return np.concatenate([source, empty_source]), np.concatenate([target, empty_target])


def record_validation(progress: dict, settings: dict, step: int, accuracy: float, save_best):
    """Model selection and early stopping on one validation accuracy.

    `progress` holds the trainer's tf.Variables (`best_accuracy`, `best_step`,
    `evaluations_since_best`, `finished`); `save_best()` is called on a new best.
    """
    if accuracy > float(progress["best_accuracy"].numpy()):
        progress["best_accuracy"].assign(accuracy)
        progress["best_step"].assign(step)
        progress["evaluations_since_best"].assign(0)
        save_best()
    else:
        progress["evaluations_since_best"].assign_add(1)
    if (accuracy >= settings["stop_at_accuracy"]
            or int(progress["evaluations_since_best"].numpy()) >= settings["patience"]):
        progress["finished"].assign(1)


def append_history(run_dir, record: dict) -> None:
    """Appends one evaluation as a JSON line to `run_dir/history.jsonl`, which the reports and
    accuracy-over-steps plots read."""
    with open(Path(run_dir) / "history.jsonl", "a") as history:
        history.write(json.dumps(record) + "\n")


def learning_rate_schedule(training: dict):
    """`learning_rate`, multiplied by `learning_rate_decay_factor` every
    `learning_rate_decay_steps` steps when those are set (a constant rate otherwise)."""
    check_learning_rate_schedule(training, drops_once=False)
    rate, steps = training.get("learning_rate", 1e-3), training.get("learning_rate_decay_steps")
    if not steps:
        return rate
    return keras.optimizers.schedules.ExponentialDecay(
        rate, steps, training.get("learning_rate_decay_factor", 1.0), staircase=True)


def resumable_checkpoint(model, optimizer, progress: dict, run_dir: Path):
    """The `tf.train.Checkpoint` of a training run and its manager under `run_dir/checkpoints`.

    It holds the model, the optimizer slots, the `progress` variables (step, best accuracy, ...)
    and the non-trainable variables: Keras' random-seed states (dropout) are not tracked by
    `tf.train.Checkpoint` on their own, and without them a resumed run would draw different
    dropout masks than an uninterrupted one.
    """
    checkpoint = tf.train.Checkpoint(
        model=model, optimizer=optimizer,
        non_trainable=[v.value for v in model.non_trainable_variables], **progress)
    manager = tf.train.CheckpointManager(checkpoint, Path(run_dir) / "checkpoints", max_to_keep=2)
    return checkpoint, manager


class Trainer:
    """Fits a `Seq2SeqModel`, selecting the checkpoint with the best validation exact match.

    Everything needed to continue is checkpointed under `run_dir/checkpoints`
    (weights, optimizer slots, step, epoch position, best accuracy, patience,
    elapsed time): killing the process and running it again continues where it
    stopped. The best model is written to `run_dir/best_model.keras`, TensorBoard
    scalars to `run_dir/logs`, and one JSON line per evaluation to
    `run_dir/history.jsonl`.

    Args:
        model: a built or unbuilt `Seq2SeqModel`.
        training: the `training` section of a configuration.
        run_dir: the run directory.
        fit_split, validation_split: `EncodedSplit`s; the test split is never seen here.
        seed: seeds the data order and teacher-forcing draws.
        length_bucket: padded lengths are rounded up to multiples of this.
        verbose: 1 shows a Keras progress bar, 0 is silent.
        strategy: a `tf.distribute` strategy (see `compgen_tf.distribute`); the model must
            have been created under its `scope()`. Each replica trains on its slice of every
            global batch of `batch_size` examples; the replicas' gradients are summed, then
            clipped, then applied, as one device would.
    """

    def __init__(self, model, training: dict, run_dir, fit_split: EncodedSplit,
                 validation_split: EncodedSplit, seed: int = 0, length_bucket: int = 8,
                 verbose: int = 1, strategy=None):
        self.model = model
        self.strategy = strategy or tf.distribute.get_strategy()
        if model.variables and not self.strategy.extended.variable_created_in_scope(
                model.variables[0].value):
            raise ValueError("the model was not created under the strategy's scope(): create "
                             "it inside `with strategy.scope():`")
        self.settings = {"batch_size": 64, "learning_rate": 1e-3, "clip_norm": 5.0,
                         "teacher_forcing_ratio": 1.0, "max_steps": 10000, "eval_every": 500,
                         "patience": 10, "stop_at_accuracy": 1.01, "checkpoint_every": 500,
                         "learning_rate_decay_steps": None, "learning_rate_decay_factor": 1.0,
                         "jit_compile": False}
        self.settings.update({k: v for k, v in training.items() if v is not None})
        self.run_dir = Path(run_dir)
        self.fit_split = fit_split
        self.validation_split = validation_split
        self.seed = int(seed)
        self.length_bucket = int(length_bucket)
        self.verbose = verbose
        self.progress = {name: tf.Variable(initial, trainable=False, name=name) for name, initial in
                         (("step", 0), ("epoch", 0), ("batch_in_epoch", 0), ("best_step", 0),
                          ("evaluations_since_best", 0), ("finished", 0),
                          ("best_accuracy", -1.0), ("elapsed_seconds", 0.0))}
        with self.strategy.scope():
            # Clipping happens in the train step, after the replicas' gradients are summed:
            # Keras' own global_clipnorm would clip each replica's part before the sum.
            self.optimizer = keras.optimizers.Adam(
                learning_rate=learning_rate_schedule(self.settings))
            if not model.built:
                model.build()
            self.optimizer.build(model.trainable_variables)
        self.checkpoint, self.manager = resumable_checkpoint(
            model, self.optimizer, self.progress, self.run_dir)
        self._train_step = self._make_train_step()

    def _make_train_step(self):
        model, optimizer, strategy = self.model, self.optimizer, self.strategy
        ratio = float(self.settings["teacher_forcing_ratio"])
        clip_norm = float(self.settings["clip_norm"])
        ids = tf.TensorSpec([None, None], tf.int32)

        def replica_step(source_ids, target_ids, seed):
            context = tf.distribute.get_replica_context()
            replicas, replica = context.num_replicas_in_sync, context.replica_id_in_sync_group
            rows = tf.shape(source_ids)[0] // replicas
            token_count = tf.math.count_nonzero(tf.not_equal(target_ids, PAD_ID), dtype=tf.float32)
            source_ids = source_ids[replica * rows:(replica + 1) * rows]
            target_ids = target_ids[replica * rows:(replica + 1) * rows]
            # One stream of teacher-forcing draws per replica; with one replica it is the
            # single-device stream [seed, step].
            replica_seed = tf.stack([seed[0], seed[1] * replicas + replica])
            with tf.GradientTape() as tape:
                logits = model.compute_logits(source_ids, target_ids, training=True,
                                              teacher_forcing_ratio=ratio, seed=replica_seed)
                loss = masked_cross_entropy(target_ids, logits, token_count)
                # Weight penalties declared by layers (e.g. an embeddings_regularizer);
                # each replica adds its share so that the replicas add up to one penalty.
                if model.losses:
                    loss += tf.add_n(model.losses) / tf.cast(replicas, loss.dtype)
            variables = model.trainable_variables
            gradients = tape.gradient(loss, variables)
            present = [i for i, g in enumerate(gradients) if g is not None]
            summed = context.all_reduce(tf.distribute.ReduceOp.SUM,
                                        [tf.convert_to_tensor(gradients[i]) for i in present])
            summed, _ = tf.clip_by_global_norm(summed, clip_norm)
            # The optimizer sums what every replica applies: each applies its share of the sum.
            optimizer.apply_gradients([(g / replicas, variables[i])
                                       for g, i in zip(summed, present)])
            return loss

        @tf.function(input_signature=[ids, ids, tf.TensorSpec([2], tf.int32)],
                     jit_compile=bool(self.settings["jit_compile"]))
        def train_step(source_ids, target_ids, seed):
            losses = strategy.run(replica_step, args=(source_ids, target_ids, seed))
            return strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

        return train_step

    @property
    def step(self) -> int:
        return int(self.progress["step"].numpy())

    def restore(self) -> bool:
        """Restores the latest checkpoint of the run, if any; True when one was found."""
        if self.manager.latest_checkpoint is None:
            return False
        self.checkpoint.restore(self.manager.latest_checkpoint).assert_existing_objects_matched()
        return True

    def fit(self) -> dict:
        """Trains until `max_steps`, early stopping or `stop_at_accuracy`; returns a summary."""
        resumed = self.restore()
        separate_dropout_streams(self.strategy, self.model, restored=resumed)
        p, s = self.progress, self.settings
        writer = tf.summary.create_file_writer(str(self.run_dir / "logs"))
        if resumed and self.verbose:
            print(f"Resuming {self.run_dir} at step {self.step}")
        bar = keras.utils.Progbar(s["max_steps"], verbose=self.verbose,
                                  stateful_metrics=["val_accuracy", "best"])
        bar.update(self.step)
        started = time.perf_counter()
        elapsed_at_start = float(p["elapsed_seconds"].numpy())
        while not int(p["finished"].numpy()) and self.step < s["max_steps"]:
            epoch = int(p["epoch"].numpy())
            batches = epoch_batches(self.fit_split, s["batch_size"], self.seed, epoch,
                                    self.length_bucket)
            for index in range(int(p["batch_in_epoch"].numpy()), len(batches)):
                source, target = pad_to_replicas(
                    *gather_batch(self.fit_split, batches[index], self.length_bucket),
                    self.strategy.num_replicas_in_sync)
                loss = float(self._train_step(source, target,
                                              tf.constant([self.seed, self.step], tf.int32)))
                if not math.isfinite(loss):
                    raise FloatingPointError(f"training loss became {loss} at step {self.step}; "
                                             "lower the learning rate or the clip norm")
                p["step"].assign_add(1)
                p["batch_in_epoch"].assign(index + 1)
                p["elapsed_seconds"].assign(elapsed_at_start + time.perf_counter() - started)
                values = [("loss", loss)]
                if self.step % s["eval_every"] == 0 or self.step >= s["max_steps"]:
                    accuracy = self._validate(writer, loss)
                    values += [("val_accuracy", accuracy),
                               ("best", float(p["best_accuracy"].numpy()))]
                if self.step % s["checkpoint_every"] == 0 or int(p["finished"].numpy()):
                    self.manager.save(checkpoint_number=self.step)
                bar.update(self.step, values)
                if int(p["finished"].numpy()) or self.step >= s["max_steps"]:
                    break
            else:
                p["epoch"].assign_add(1)
                p["batch_in_epoch"].assign(0)
        p["finished"].assign(1)
        self.manager.save(checkpoint_number=self.step)
        writer.close()
        if not (self.run_dir / BEST_MODEL).exists():
            raise RuntimeError("training ended before any validation: lower eval_every")
        return {"steps": self.step, "best_step": int(p["best_step"].numpy()),
                "best_val_accuracy": float(p["best_accuracy"].numpy()),
                "wall_time_s": round(float(p["elapsed_seconds"].numpy()), 1)}

    def _save_best(self):
        self.model.save(self.run_dir / BEST_MODEL)
        # Checkpoint now too, so that a resumed run never disagrees with the saved best model.
        self.manager.save(checkpoint_number=self.step)

    def _validate(self, writer, loss) -> float:
        p, s = self.progress, self.settings
        accuracy = evaluate_split(self.model, self.validation_split, keep_predictions=False).accuracy
        record_validation(p, s, self.step, accuracy, self._save_best)
        with writer.as_default(step=self.step):
            tf.summary.scalar("loss", loss)
            tf.summary.scalar("val_accuracy", accuracy)
        append_history(self.run_dir, {"step": self.step, "loss": round(loss, 5),
                                      "val_accuracy": accuracy,
                                      "elapsed_s": round(float(p["elapsed_seconds"].numpy()), 1)})
        return accuracy
