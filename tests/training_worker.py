"""One backend's side of `tests/test_jax_training.py`: the library's training path from a
saved model.

    KERAS_BACKEND=jax python tests/training_worker.py MODEL.keras RUN_DIR OUT.npz [TEACHER_FORCING [UNROLL]]

Loads the task model in MODEL.keras (weights and all: both backends start from the same
numbers), trains it with `compgen_tf.training.fit.fit_split` for `STEPS` updates on the SCAN
commands of at most three words (batches of 8 drawn by NumPy from seed 3: the same batches
on every backend), dropout off and the gradients clipped, and writes OUT.npz: `losses`, each
update's own training loss, and `weight_<i>`, the trained weights in the model's order.
TEACHER_FORCING (default 1.0) is the teacher-forcing ratio; below 1 the rows fed their own
outputs are drawn from each backend's generator, which differ. UNROLL `true` trains with
`training.unroll` and `training.jit_compile` (the batch-1 regime's recurrences written out).

Run as a script in its own process: a process holds one Keras backend.
"""

import sys

import keras
import numpy as np

import compgen_tf.models  # noqa: F401  (registers the task models for load_model)
import tfds_scan
from compgen_tf.training.data import encode_split
from compgen_tf.training.fit import fit_split

STEPS = 8
SETTINGS = {"batch_size": 8, "learning_rate": 0.01, "clip_norm": 0.5, "max_steps": STEPS,
            "eval_every": STEPS, "checkpoint_every": STEPS // 2, "patience": STEPS,
            "stop_at_accuracy": 1.1}


def examples():
    """SCAN's commands of at most three words and their actions."""
    return [(c, tfds_scan.interpret(c)) for c in tfds_scan.all_commands() if len(c.split()) <= 3]


class UpdateLosses(keras.callbacks.Callback):
    """Each update's own loss, as the library's train step logs it."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(float(logs["update_loss"]))


def main(model_file, run_dir, out, teacher_forcing="1.0", unroll="false"):
    model = keras.saving.load_model(model_file)
    split = encode_split(model, examples())
    losses = UpdateLosses()
    settings = dict(SETTINGS, teacher_forcing_ratio=float(teacher_forcing))
    if unroll == "true":
        settings.update(unroll=True, jit_compile=True)
    fit_split(model, settings, run_dir, split, split, seed=3, verbose=0, callbacks=[losses])
    np.savez(out, losses=np.array(losses.losses),
             **{f"weight_{i}": np.asarray(w.value) for i, w in enumerate(model.weights)})


if __name__ == "__main__":
    main(*sys.argv[1:])
