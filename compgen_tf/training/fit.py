"""`fit_run`: one training run of a task model on `keras.Model.fit`, resumable and selected."""

from __future__ import annotations

import gc
import math
from pathlib import Path

import keras
import tensorflow as tf

from compgen_tf.training.distribute import separate_dropout_streams
from compgen_tf.training.batches import SplitBatches, training_dataset
from compgen_tf.training.bleu import corpus_bleu
from compgen_tf.training.callbacks import (BEST_MODEL, ModelSelection, ResumableCheckpoint,
                                           RunReport, TrainingProgress, keep_history_until,
                                           save_atomically)
from compgen_tf.models.train_step import TrainStep
from compgen_tf.training.evaluation import evaluate_split
from compgen_tf.training.settings import TrainingConfig


def fit_run(model, training, run_dir, stream, validate, seed: int = 0,
            strategy=None, verbose: int = 1, callbacks=(), extend: bool = False) -> dict:
    """Trains `model` with `fit` until `max_steps`, early stopping or `stop_at_accuracy`.

    Everything needed to continue is checkpointed under `run_dir/checkpoints`: running it
    again on the same run directory continues where the last process stopped, with the
    same weights, data order and random draws as an uninterrupted run; a finished run is
    not trained again. The best model (validation exact match, or BLEU with
    `training.selection` "bleu") is `run_dir/best_model.keras`, TensorBoard scalars go to
    `run_dir/logs`, one JSON line per evaluation to `run_dir/history.jsonl` (its `loss`:
    the mean training loss of the last `LOSS_WINDOW` updates, see `ModelSelection`).

    Args:
        model: a task model with the `TrainStep` mixin, created under `strategy.scope()`,
            or a compiled Keras model (its loss is kept; Keras' own train step).
        training: the run's `TrainingConfig` (a mapping of its keys is resolved with the
            class defaults).
        run_dir: the run directory.
        stream: the step-indexed training batches (`SplitBatches`, episodes, ...).
        validate: `validate(model) -> accuracy` (or {"accuracy", "loss", "bleu"}, see
            `ModelSelection`) on validation data carved from train.
        seed: the teacher-forcing draws' seed.
        strategy: a `tf.distribute` strategy (`compgen_tf.training.distribute.make_strategy`).
        verbose: 0 silent; 1 a line per evaluation and, on a terminal, a bar over the
            whole run (`RunReport`).
        callbacks: more Keras callbacks, run after the library's own.
        extend: the checkpoint in `run_dir` is another, finished run's (a Hyperband parent):
            continue it up to this run's `max_steps`, with a fresh patience count.

    Returns:
        {"steps", "best_step", "best_val_accuracy", "wall_time_s"}; with
        `training.selection` "bleu", "best_val_bleu" instead of "best_val_accuracy".
    """
    run_dir = Path(run_dir)
    settings = as_training_config(training)
    strategy = strategy or tf.distribute.get_strategy()
    if (keras.backend.backend() == "tensorflow" and model.variables
            and not strategy.extended.variable_created_in_scope(model.variables[0].value)):
        raise ValueError("the model was not created under the strategy's scope(): create "
                         "it inside `with strategy.scope():`")
    progress = TrainingProgress()
    rate = settings.learning_rate_schedule()
    with strategy.scope():
        if isinstance(model, TrainStep):
            model.compile(optimizer=keras.optimizers.Adam(learning_rate=rate),
                          clip_norm=settings.clip_norm,
                          teacher_forcing_ratio=settings.teacher_forcing_ratio,
                          sampling_seed=seed, jit_compile=settings.jit_compile,
                          unroll=settings.unroll, label_smoothing=settings.label_smoothing,
                          log_update_loss=True)
        elif settings.unroll or settings.label_smoothing:
            key = "unroll" if settings.unroll else "label_smoothing"
            raise ValueError(f"training.{key} applies to the models with the library's own "
                             f"train step (TrainStep); {type(model).__name__} uses Keras' own")
        else:  # a plain Keras model (the toy tasks) keeps its own loss and Keras' train step
            # Jitted on JAX whatever the setting, as `TrainStep.jit_compile`: Keras' JAX
            # trainer without jit runs the step op by op (a recurrent toy model 1.5 s a step).
            model.compile(optimizer=keras.optimizers.Adam(
                              learning_rate=rate, global_clipnorm=settings.clip_norm),
                          loss=model.loss,
                          jit_compile=settings.jit_compile or keras.backend.backend() == "jax")
        model.optimizer.build(model.trainable_variables)
    checkpoint = ResumableCheckpoint(model, progress, run_dir, settings.checkpoint_interval)
    resumed = checkpoint.restore()
    if resumed and extend:
        progress["finished"].assign(0)
        progress["evaluations_since_best"].assign(0)
        checkpoint.save()  # a retry of this run resumes from here, not from the parent
    separate_dropout_streams(strategy, model, restored=resumed)
    step = int(model.optimizer.iterations.numpy())
    if resumed:
        # Evaluations after the checkpoint are made again: drop their earlier lines.
        keep_history_until(run_dir, step)
        if verbose and not progress.value("finished"):
            print(f"Resuming {run_dir} at step {step}")

    def save_best():
        save_atomically(model, run_dir / BEST_MODEL)
        # Checkpoint now too, so that a resumed run never disagrees with the saved best model.
        checkpoint.save()

    max_steps = settings.max_steps
    # A fit "epoch" is the stretch between two evaluations or checkpoints: what the run
    # shows is `RunReport`'s, not Keras' bar of each such stretch.
    chunk = math.gcd(settings.eval_every, settings.checkpoint_interval)
    report = RunReport(max_steps, step) if verbose else None
    all_callbacks = [ModelSelection(validate, progress, run_dir, save_best,
                                    settings.eval_every, max_steps, settings.patience,
                                    settings.stop_at_accuracy, select_on=settings.selection,
                                    report=report),
                     checkpoint, keras.callbacks.TensorBoard(run_dir / "logs"), *callbacks]

    def fit(steps_per_epoch, epochs, initial_epoch=0):
        model.fit(training_dataset(stream, int(model.optimizer.iterations.numpy()), strategy),
                  steps_per_epoch=steps_per_epoch, initial_epoch=initial_epoch, epochs=epochs,
                  callbacks=all_callbacks, shuffle=False, verbose=0)
        # Finalise the data generator's iterator now, not at interpreter exit (where
        # TensorFlow logs an error about it).
        gc.collect()

    if not progress.value("finished") and step < max_steps and step % chunk:
        # Continuing another run (a warm start) from a step between two evaluations: a
        # short first stretch up to the next one keeps evaluations on multiples of eval_every.
        fit(min(chunk - step % chunk, max_steps - step), 1)
        step = int(model.optimizer.iterations.numpy())
    if not progress.value("finished") and step < max_steps:
        fit(chunk, -(-max_steps // chunk), initial_epoch=step // chunk)
    if report is not None:
        report.close()
    progress["finished"].assign(1)
    checkpoint.save()
    if not (run_dir / BEST_MODEL).exists():
        raise RuntimeError("training ended before any validation: lower eval_every")
    best = (("best_val_bleu", round(100.0 * progress.value("best_accuracy"), 4))
            if settings.selection == "bleu"
            else ("best_val_accuracy", progress.value("best_accuracy")))
    return {"steps": int(model.optimizer.iterations.numpy()),
            "best_step": progress.value("best_step"), best[0]: best[1],
            "wall_time_s": round(progress.value("elapsed_seconds"), 1)}


def fit_split(model, training, run_dir, fit_split, validation_split, seed: int = 0,
              length_bucket: int = 8, strategy=None, verbose: int = 1, callbacks=(),
              extend: bool = False) -> dict:
    """`fit_run` on a SCAN split: batches of `fit_split` (`SplitBatches`), model selection on
    `split_validation(validation_split, training.selection)` (both
    `compgen_tf.training.data.EncodedSplit`s)."""
    settings = as_training_config(training)
    return fit_run(
        model, settings, run_dir,
        SplitBatches(fit_split, settings.batch_size, seed, length_bucket),
        split_validation(validation_split, settings.selection),
        seed=seed, strategy=strategy, verbose=verbose, callbacks=callbacks, extend=extend)


def split_validation(validation_split, selection: str = "exact_match"):
    """`validate(model)` for `fit_run` on an encoded split: its exact match, or with
    `selection` "bleu" {"accuracy", "bleu"} (corpus BLEU of the predictions)."""
    def validate(model):
        if selection != "bleu":
            return evaluate_split(model, validation_split, keep_predictions=False).accuracy
        result = evaluate_split(model, validation_split)
        return {"accuracy": result.accuracy,
                "bleu": corpus_bleu(result.predictions, [[a] for a in validation_split.actions])}

    return validate


def as_training_config(training) -> TrainingConfig:
    """`training` itself when it is a `TrainingConfig`; a mapping of its keys resolved over
    the class defaults (`TrainingConfig.from_section`), for a model trained outside a run."""
    if isinstance(training, TrainingConfig):
        return training
    return TrainingConfig.from_section(training, origin="training settings")
