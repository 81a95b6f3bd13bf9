"""`fit_run`: one training run of a task model on `keras.Model.fit`, resumable and selected."""

from __future__ import annotations

import gc
import math
from pathlib import Path

import keras
import tensorflow as tf

from compgen_tf.training.distribute import separate_dropout_streams
from compgen_tf.training.batches import training_dataset
from compgen_tf.training.callbacks import (BEST_MODEL, ModelSelection, ResumableCheckpoint,
                                           TrainingProgress, keep_history_until)
from compgen_tf.models.train_step import TrainStep
from compgen_tf.training.schedule import check_learning_rate_schedule

# Every training setting and its default, in one place (checkpoint_every None: at every
# evaluation). `schedule` says what
# learning_rate_decay_factor does: "every" multiplies the rate every
# learning_rate_decay_steps steps, "once" multiplies it once at learning_rate_drop_step
# (default: half of max_steps; meta seq2seq, Lake 2019).
TRAINING_DEFAULTS = {
    "batch_size": 64, "learning_rate": 1e-3, "clip_norm": 5.0, "teacher_forcing_ratio": 1.0,
    "max_steps": 10000, "eval_every": 500, "checkpoint_every": None, "patience": 10,
    "stop_at_accuracy": 1.01, "learning_rate_decay_steps": None,
    "learning_rate_drop_step": None, "learning_rate_decay_factor": 1.0, "jit_compile": False, "unroll": False,
    "selection": "exact_match", "length_head_steps": 20000, "length_head_learning_rate": 3e-3,
    "length_head_batch_size": 256,
}
# `selection`: what model selection maximises on validation (`config.SELECTIONS`): exact
# match, or (the English-French set, where exact match stays at 0 for thousands of steps and
# ties every checkpoint) corpus BLEU, or "last" (no selection: the last evaluated model).
# Meta seq2seq's defaults where they differ (Lake 2019: clip 50, 1e-3 -> 1e-4 halfway).
META_TRAINING_DEFAULTS = {**TRAINING_DEFAULTS, "clip_norm": 50.0, "eval_every": 250,
                          "patience": 1000, "learning_rate_decay_factor": 0.1}
# The toy tasks' defaults where they differ: no clipping, shorter runs.
TOY_TRAINING_DEFAULTS = {**TRAINING_DEFAULTS, "clip_norm": None, "max_steps": 1000,
                         "eval_every": 100}


def training_settings(training: dict, defaults: dict, schedule: str) -> dict:
    """`training` over `defaults` (None values take the default); the schedule's keys checked."""
    check_learning_rate_schedule(training, drops_once=schedule == "once")
    settings = {**defaults, **{k: v for k, v in training.items() if v is not None}}
    settings["checkpoint_every"] = settings["checkpoint_every"] or settings["eval_every"]
    return settings


def learning_rate_schedule(settings: dict, schedule: str = "every"):
    """The learning rate of `settings` under `schedule` ("every" or "once", see
    `TRAINING_DEFAULTS`)."""
    rate = settings.get("learning_rate", 1e-3)
    factor = settings.get("learning_rate_decay_factor", 1.0)
    if schedule == "once":
        boundary = settings.get("learning_rate_drop_step") or max(
            1, settings.get("max_steps", 10000) // 2)
        return keras.optimizers.schedules.PiecewiseConstantDecay([boundary],
                                                                 [rate, rate * factor])
    steps = settings.get("learning_rate_decay_steps")
    if not steps:
        return rate
    return keras.optimizers.schedules.ExponentialDecay(rate, steps, factor, staircase=True)


def fit_run(model, training: dict, run_dir, stream, validate, seed: int = 0,
            strategy=None, verbose: int = 1, defaults: dict = TRAINING_DEFAULTS,
            schedule: str = "every", callbacks=(), extend: bool = False) -> dict:
    """Trains `model` with `fit` until `max_steps`, early stopping or `stop_at_accuracy`.

    Everything needed to continue is checkpointed under `run_dir/checkpoints`: running it
    again on the same run directory continues where the last process stopped, with the
    same weights, data order and random draws as an uninterrupted run; a finished run is
    not trained again. The best model (validation exact match, or BLEU with
    `training.selection` "bleu") is `run_dir/best_model.keras`, TensorBoard scalars go to
    `run_dir/logs`, one JSON line per evaluation to `run_dir/history.jsonl`.

    Args:
        model: a task model with the `TrainStep` mixin, created under `strategy.scope()`,
            or a compiled Keras model (its loss is kept; Keras' own train step).
        training: the `training` section of a configuration.
        run_dir: the run directory.
        stream: the step-indexed training batches (`SplitBatches`, episodes, ...).
        validate: `validate(model) -> accuracy` (or {"accuracy", "loss", "bleu"}, see
            `ModelSelection`) on validation data carved from train.
        seed: the teacher-forcing draws' seed.
        strategy: a `tf.distribute` strategy (`compgen_tf.training.distribute.make_strategy`).
        verbose: 0 silent, 1 progress bars.
        defaults: the settings' defaults (`TRAINING_DEFAULTS`, `META_TRAINING_DEFAULTS` or
            `TOY_TRAINING_DEFAULTS`).
        schedule: what the learning-rate decay keys mean ("every" or "once").
        callbacks: more Keras callbacks, run after the library's own.
        extend: the checkpoint in `run_dir` is another, finished run's (a Hyperband parent):
            continue it up to this run's `max_steps`, with a fresh patience count.

    Returns:
        {"steps", "best_step", "best_val_accuracy", "wall_time_s"}; with
        `training.selection` "bleu", "best_val_bleu" instead of "best_val_accuracy".
    """
    run_dir = Path(run_dir)
    settings = training_settings(training, defaults, schedule)
    strategy = strategy or tf.distribute.get_strategy()
    if model.variables and not strategy.extended.variable_created_in_scope(
            model.variables[0].value):
        raise ValueError("the model was not created under the strategy's scope(): create "
                         "it inside `with strategy.scope():`")
    progress = TrainingProgress()
    rate = learning_rate_schedule(settings, schedule)
    with strategy.scope():
        if isinstance(model, TrainStep):
            model.compile(optimizer=keras.optimizers.Adam(learning_rate=rate),
                          clip_norm=settings["clip_norm"],
                          teacher_forcing_ratio=settings["teacher_forcing_ratio"],
                          sampling_seed=seed, jit_compile=bool(settings["jit_compile"]),
                          unroll=bool(settings["unroll"]))
        elif settings["unroll"]:
            raise ValueError("training.unroll applies to the models with the library's own "
                             f"train step (TrainStep); {type(model).__name__} uses Keras' own")
        else:  # a plain Keras model (the toy tasks) keeps its own loss and Keras' train step
            model.compile(optimizer=keras.optimizers.Adam(
                              learning_rate=rate, global_clipnorm=settings["clip_norm"]),
                          loss=model.loss, jit_compile=bool(settings["jit_compile"]))
        model.optimizer.build(model.trainable_variables)
    checkpoint = ResumableCheckpoint(model, progress, run_dir, settings["checkpoint_every"])
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
        model.save(run_dir / BEST_MODEL)
        # Checkpoint now too, so that a resumed run never disagrees with the saved best model.
        checkpoint.save()

    max_steps = int(settings["max_steps"])
    # A fit "epoch" is the stretch between two evaluations or checkpoints.
    chunk = math.gcd(int(settings["eval_every"]), int(settings["checkpoint_every"]))
    all_callbacks = [ModelSelection(validate, progress, run_dir, save_best,
                                    settings["eval_every"], max_steps, settings["patience"],
                                    settings["stop_at_accuracy"],
                                    select_on=settings.get("selection", "exact_match")),
                     checkpoint, keras.callbacks.TensorBoard(run_dir / "logs"), *callbacks]

    def fit(steps_per_epoch, epochs, initial_epoch=0):
        model.fit(training_dataset(stream, int(model.optimizer.iterations.numpy()), strategy),
                  steps_per_epoch=steps_per_epoch, initial_epoch=initial_epoch, epochs=epochs,
                  callbacks=all_callbacks, shuffle=False, verbose=verbose)
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
    progress["finished"].assign(1)
    checkpoint.save()
    if not (run_dir / BEST_MODEL).exists():
        raise RuntimeError("training ended before any validation: lower eval_every")
    best = (("best_val_bleu", round(100.0 * progress.value("best_accuracy"), 4))
            if settings.get("selection") == "bleu"
            else ("best_val_accuracy", progress.value("best_accuracy")))
    return {"steps": int(model.optimizer.iterations.numpy()),
            "best_step": progress.value("best_step"), best[0]: best[1],
            "wall_time_s": round(progress.value("elapsed_seconds"), 1)}


def fit_split(model, training: dict, run_dir, fit_split, validation_split, seed: int = 0,
              length_bucket: int = 8, strategy=None, verbose: int = 1, callbacks=(),
              extend: bool = False) -> dict:
    """`fit_run` on a SCAN split: batches of `fit_split` (`SplitBatches`), model selection on
    the exact match of `validation_split` (both `compgen_tf.training.data.EncodedSplit`s),
    or on its corpus BLEU with `training.selection` "bleu"."""
    from compgen_tf.training.bleu import corpus_bleu
    from compgen_tf.training.evaluation import evaluate_split
    from compgen_tf.training.batches import SplitBatches

    settings = training_settings(training, TRAINING_DEFAULTS, "every")

    def validate(m):
        if settings["selection"] != "bleu":
            return evaluate_split(m, validation_split, keep_predictions=False).accuracy
        result = evaluate_split(m, validation_split)
        return {"accuracy": result.accuracy,
                "bleu": corpus_bleu(result.predictions, [[a] for a in validation_split.actions])}

    return fit_run(
        model, training, run_dir,
        SplitBatches(fit_split, settings["batch_size"], seed, length_bucket), validate,
        seed=seed, strategy=strategy, verbose=verbose, callbacks=callbacks, extend=extend)
