"""Training: every model of the library trains with `keras.Model.fit`.

- `compgen_tf.models.train_step.TrainStep` (it lives with the models): the `train_step` of
  the task models (what Keras does not do: the loss over the global batch's token count,
  gradient clipping after the replicas' sum, per-replica teacher-forcing draws).
- `callbacks`: model selection on validation with early stopping that survives a restart,
  a checkpoint that makes an interrupted run resume exactly, the history file.
- `settings.TrainingConfig`: every training setting, its type and default, resolved once.
- `fit.fit_run`: compiles a task model and fits it on a step-indexed batch stream in a
  run directory, resuming where an earlier process stopped.
"""
