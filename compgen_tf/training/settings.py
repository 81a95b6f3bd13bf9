"""`TrainingConfig`: every training setting of a run, its type and its default, in one place."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from compgen_tf.sections import section_keys, typed_section

# What model selection maximises on validation: exact match, or (the English-French set,
# where exact match stays at 0 for thousands of steps and ties every checkpoint) corpus BLEU,
# or "last" (no selection: the last evaluated model is kept; stop_at_accuracy still ends a run).
SELECTIONS = ("exact_match", "bleu", "last")


@dataclasses.dataclass(frozen=True)
class TrainingConfig:
    """The `training` section of a run's configuration, resolved: optimisation, evaluation
    and model selection.

    Built once per run from the configuration file and the command line
    (`TrainingConfig.from_section`); `compgen_tf.training.fit.fit_run` reads it and nothing
    resolves it again. A kind of experiment has defaults of its own where it differs from
    these (meta seq2seq, the toy tasks: `Experiment.training_defaults`).

    Attributes:
        batch_size: examples per step (global, summed over replicas).
        learning_rate: Adam's initial rate.
        clip_norm: the global gradient norm clip; None: no clipping.
        teacher_forcing_ratio: the share of decoder steps fed the target token.
        max_steps: the run's length in optimiser steps.
        eval_every: steps between two validations (model selection, early stopping).
        checkpoint_every: steps between two checkpoints; None: at every validation.
        patience: validations without improvement before the run stops.
        stop_at_accuracy: the run stops once validation reaches it (1.01: never).
        learning_rate_decay_steps: the rate is multiplied by `learning_rate_decay_factor`
            every this many steps (a trainer whose rate decays repeatedly).
        learning_rate_drop_step: the step at which the rate is multiplied by the factor once
            (meta-training; default half of `max_steps`).
        learning_rate_decay_factor: the factor of either schedule.
        warmup_steps: the rate rises linearly from 1/warmup_steps of it to all of it over
            the first this many steps, then follows the schedule above
            (`compgen_tf.training.schedules.LinearWarmup`); 0: no warm-up.
        label_smoothing: the share of each target token's probability spread evenly over
            the other tokens the model can emit (`token_cross_entropy`); 0: none.
        jit_compile: compile the train step with XLA.
        unroll: one traced step per padded batch shape, recurrences unrolled (`TrainStep`).
        selection: what model selection maximises on validation (`SELECTIONS`).
        length_head_steps, length_head_learning_rate, length_head_batch_size: a model with a
            length head fits it first, on its own (`Seq2SeqModel.fit_length_head`): updates,
            Adam's rate (cosine decay) and batch size.
        drops_once: what the decay keys mean for this trainer (set by the kind of experiment,
            not by a file): True, the rate drops once (`learning_rate_drop_step`); False, it
            decays every `learning_rate_decay_steps`. The other key is refused. None (a
            file checked before its trainer is known): neither is refused yet.
    """

    batch_size: int = 64
    learning_rate: float = 1e-3
    clip_norm: float | None = 5.0
    teacher_forcing_ratio: float = 1.0
    max_steps: int = 10000
    eval_every: int = 500
    checkpoint_every: int | None = None
    patience: int = 10
    stop_at_accuracy: float = 1.01
    learning_rate_decay_steps: int | None = None
    learning_rate_drop_step: int | None = None
    learning_rate_decay_factor: float = 1.0
    warmup_steps: int = 0
    label_smoothing: float = 0.0
    jit_compile: bool = False
    unroll: bool = False
    selection: str = "exact_match"
    length_head_steps: int = 20000
    length_head_learning_rate: float = 3e-3
    length_head_batch_size: int = 256
    drops_once: bool | None = dataclasses.field(default=False, metadata={"internal": True})

    def __post_init__(self):
        for key in ("batch_size", "max_steps", "eval_every"):
            if getattr(self, key) < 1:
                raise ValueError(f"training.{key} must be >= 1, got {getattr(self, key)}")
        if not 0.0 <= self.teacher_forcing_ratio <= 1.0:
            raise ValueError("training.teacher_forcing_ratio must be in [0, 1]")
        if self.warmup_steps < 0:
            raise ValueError(f"training.warmup_steps must be >= 0, got {self.warmup_steps}")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"training.label_smoothing must be in [0, 1), got "
                             f"{self.label_smoothing}")
        if self.selection not in SELECTIONS:
            raise ValueError(f"training.selection must be one of {list(SELECTIONS)}, got "
                             f"{self.selection!r}")
        if self.drops_once is None:  # a file read before its trainer is known
            return
        wrong, right = (("learning_rate_decay_steps", "learning_rate_drop_step")
                        if self.drops_once
                        else ("learning_rate_drop_step", "learning_rate_decay_steps"))
        if getattr(self, wrong):
            what = ("multiplies its learning rate once" if self.drops_once
                    else "multiplies its learning rate every N steps")
            raise ValueError(f"this model {what}: set training.{right}, not training.{wrong}")

    @classmethod
    def from_section(cls, section: Mapping = (), defaults: Mapping = (),
                     drops_once: bool | None = False, origin: str = "configuration"):
        """The settings of a `training` section (a JSON object) over `defaults` (a kind of
        experiment's own, over the class defaults); a key set to null takes its default.

        Raises:
            ConfigError: for an unknown key, a value of the wrong type or out of range, or
                the decay key that this trainer does not read, naming `origin`.

        Example:
            >>> TrainingConfig.from_section({"batch_size": 8}).checkpoint_interval
            500
        """
        return typed_section(cls, dict(section), "training", origin, defaults,
                             drops_once=drops_once)

    @property
    def checkpoint_interval(self) -> int:
        """Steps between two checkpoints: `checkpoint_every`, else `eval_every`."""
        return self.checkpoint_every or self.eval_every

    def learning_rate_schedule(self):
        """Adam's learning rate: a constant, or the decay this trainer's keys describe,
        after a linear warm-up of `warmup_steps` when there is one."""
        # Imported here, not at the top: reading a configuration needs no TensorFlow.
        from compgen_tf.training.schedules import LinearWarmup

        schedule = self._decay_schedule()
        return LinearWarmup(schedule, self.warmup_steps) if self.warmup_steps else schedule

    def _decay_schedule(self):
        import keras

        rate, factor = self.learning_rate, self.learning_rate_decay_factor
        if self.drops_once:
            boundary = self.learning_rate_drop_step or max(1, self.max_steps // 2)
            return keras.optimizers.schedules.PiecewiseConstantDecay([boundary],
                                                                     [rate, rate * factor])
        if not self.learning_rate_decay_steps:
            return rate
        return keras.optimizers.schedules.ExponentialDecay(
            rate, self.learning_rate_decay_steps, factor, staircase=True)


TRAINING_KEYS = section_keys(TrainingConfig)
"""{key: type} of the settings a configuration's `training` section may hold."""
