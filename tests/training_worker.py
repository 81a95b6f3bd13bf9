"""One backend's side of `tests/test_jax_training.py`: the library's training path from saved
models, every job in one process.

    KERAS_BACKEND=jax python tests/training_worker.py JOBS.json

JOBS.json is a list of jobs, each `{"model": MODEL.keras, "run_dir": DIR, "out": OUT.npz}`
with optional `"teacher_forcing"` (ratio, default 1.0), `"unroll"` (default false) and
`"length_head_steps"` (default 0). A job loads the task model in MODEL.keras (weights and
all: both backends start from the same numbers); with `length_head_steps`, fits its length
head first (`Seq2SeqModel.fit_length_head`, batches of 64 shuffled from seed 3), as
`counting_seq2seq`'s runs do; then trains it with `compgen_tf.training.fit.fit_split` for
`STEPS` updates on `examples()` (batches of 8 drawn by NumPy from
seed 3: the same batches on every backend), dropout off and the gradients clipped. It
writes OUT.npz: `losses`, each update's own training loss, `length_head_mse` (NaN without a
fitted head), `largest_change`, the largest change of any weight, `decoded`, the trained
model's greedy ids for `DECODED` (through `_greedy_decode_graph`, which on JAX pads the
batch to a few shapes), and `weight_<i>`, the trained weights in the model's order. Below a teacher
forcing ratio of 1 the rows fed their own outputs are drawn from each backend's generator,
which differ. `unroll` trains with `training.unroll` and `training.jit_compile` (the
batch-1 regime's recurrences written out).

JAX's side runs as a script in its own process (a process holds one Keras backend);
TensorFlow's, the suite's own backend, runs in the test's process through `main`.
"""

import json
import sys
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

import compgen_tf.models  # noqa: F401  (registers the task models for load_model)
import tfds_scan
from compgen_tf.training.data import encode_split
from compgen_tf.training.fit import fit_split

STEPS = 8
# Five rows (padded to eight on JAX) of widths 3 to 7 (padded to eight).
DECODED = ["walk", "jump twice", "run left", "look around right", "turn opposite left thrice"]
SETTINGS = {"batch_size": 8, "learning_rate": 0.01, "clip_norm": 0.5, "max_steps": STEPS,
            "eval_every": STEPS, "checkpoint_every": STEPS // 2, "patience": STEPS,
            "stop_at_accuracy": 1.1}


def examples():
    """80 of SCAN's commands of at most three words, those whose actions are at most 7
    tokens, and their actions: ten full batches of 8, every one padded to (8, 8) sources and
    targets, so that each backend traces and compiles its train step once (three shapes, two
    of them for a longer target or a smaller last batch, tripled the JAX worker's compile
    time). Every word of SCAN's commands of at most three words, and of their actions, is
    among them."""
    pairs = [(c, tfds_scan.interpret(c)) for c in tfds_scan.all_commands() if len(c.split()) <= 3]
    return [(c, a) for c, a in pairs if len(a.split()) <= 7][:80]


class UpdateLosses(keras.callbacks.Callback):
    """Each update's own loss, as the library's train step logs it."""

    def __init__(self):
        super().__init__()
        self.losses = []

    def on_train_batch_end(self, batch, logs=None):
        self.losses.append(float(logs["update_loss"]))


def train(model, run_dir, out, teacher_forcing=1.0, unroll=False, length_head_steps=0):
    """One job (the module's docstring)."""
    model = keras.saving.load_model(model)
    initial = [np.asarray(w.value) for w in model.weights]
    pairs = examples()
    length_head_mse = float("nan")
    if length_head_steps:
        source_ids, _ = model.encode_commands(tf.constant([c for c, _ in pairs]))
        length_head_mse = model.fit_length_head(
            np.asarray(source_ids), [len(a.split()) for _, a in pairs],
            steps=length_head_steps, batch_size=64, seed=3)
    split = encode_split(model, pairs)
    losses = UpdateLosses()
    settings = dict(SETTINGS, teacher_forcing_ratio=float(teacher_forcing))
    if unroll:
        settings.update(unroll=True, jit_compile=True)
    fit_split(model, settings, run_dir, split, split, seed=3, verbose=0, callbacks=[losses])
    weights = [np.asarray(w.value) for w in model.weights]
    change = max(float(np.max(np.abs(w - w0), initial=0.0)) for w, w0 in zip(weights, initial))
    ids, _ = model.encode_commands(tf.constant(DECODED))
    decoded = np.asarray(model._greedy_decode_graph(np.asarray(ids)))
    np.savez(out, losses=np.array(losses.losses), length_head_mse=np.float64(length_head_mse),
             largest_change=np.float64(change), decoded=decoded,
             **{f"weight_{i}": w for i, w in enumerate(weights)})


def main(jobs_file):
    for job in json.loads(Path(jobs_file).read_text()):
        train(**job)


if __name__ == "__main__":
    main(*sys.argv[1:])
