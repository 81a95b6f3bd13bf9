"""`LinearWarmup`: a learning rate that rises linearly to another schedule's over the first
steps."""

from __future__ import annotations

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="compgen_tf")
class LinearWarmup(keras.optimizers.schedules.LearningRateSchedule):
    """The rate of `schedule` times min(1, (step + 1) / `warmup_steps`).

    A Transformer trained with Adam from its first step at full rate can diverge or settle
    badly (post-norm layers especially); a warm-up lets Adam's moment estimates form first
    (Vaswani et al. 2017, Sec. 5.3, warm up linearly over 4,000 steps; here the rate after
    the warm-up is the run's own schedule, constant or decaying, not their inverse square
    root).

    Args:
        schedule: a float (a constant rate) or a `LearningRateSchedule`.
        warmup_steps: the number of steps to reach the full rate (>= 1).

    Example:
        >>> rate = LinearWarmup(1e-3, warmup_steps=4)
        >>> [round(float(rate(step)), 6) for step in range(5)]
        [0.00025, 0.0005, 0.00075, 0.001, 0.001]
    """

    def __init__(self, schedule, warmup_steps):
        if isinstance(warmup_steps, bool) or int(warmup_steps) < 1:
            raise ValueError(f"warmup_steps must be >= 1, got {warmup_steps}")
        self.schedule = schedule
        self.warmup_steps = int(warmup_steps)

    def __call__(self, step):
        step = ops.cast(step, "float32")
        rate = (self.schedule(step) if callable(self.schedule)
                else ops.convert_to_tensor(self.schedule, "float32"))
        return ops.cast(rate, "float32") * ops.minimum(1.0, (step + 1.0) / self.warmup_steps)

    def get_config(self):
        schedule = (keras.saving.serialize_keras_object(self.schedule)
                    if isinstance(self.schedule, keras.optimizers.schedules.LearningRateSchedule)
                    else float(self.schedule))
        return {"schedule": schedule, "warmup_steps": self.warmup_steps}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if isinstance(config["schedule"], dict):
            config["schedule"] = keras.saving.deserialize_keras_object(config["schedule"])
        return cls(**config)
