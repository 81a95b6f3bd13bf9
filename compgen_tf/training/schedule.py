"""Which learning-rate schedule key a trainer reads (checked where a configuration is made
and where a run starts)."""

from __future__ import annotations

from compgen_tf.errors import ConfigError


def check_learning_rate_schedule(training: dict, drops_once: bool) -> None:
    """A `ConfigError` for the schedule key that the trainer would not read: meta-training
    multiplies its rate once (`learning_rate_drop_step`), every other trainer every
    `learning_rate_decay_steps` steps."""
    wrong, right = (("learning_rate_decay_steps", "learning_rate_drop_step") if drops_once
                    else ("learning_rate_drop_step", "learning_rate_decay_steps"))
    if training.get(wrong):
        what = ("multiplies its learning rate once" if drops_once
                else "multiplies its learning rate every N steps")
        raise ConfigError(f"this model {what}: set training.{right}, not training.{wrong}")
