"""One Keras backend's side of the cross-backend checks of `tests/test_backends.py`.

    KERAS_BACKEND=jax python tests/backend_worker.py save OUT_DIR
        builds one functional model that uses every public layer, gives it weights drawn by
        NumPy from a fixed seed (the same on every backend), and writes
        OUT_DIR/<backend>.keras and OUT_DIR/<backend>.npz (its outputs on fixed inputs).
    KERAS_BACKEND=torch python tests/backend_worker.py load OUT_DIR FILE.keras [...]
        loads each file and writes OUT_DIR/<file stem>_on_<backend>.npz.

Run as a script in its own process: a process holds one Keras backend.
"""

import sys
from pathlib import Path

import keras
import numpy as np

from compgen_tf.layers import (GAttention, GDecode, GEmbed, GLSTMCell, GroupConv,
                               KeyValueMemory, StackLSTMCell)

SOURCE = ["<pad>", "<unk>", "<sos>", "<eos>", "jump", "look", "run", "walk", "twice", "and"]
TARGET = ["<pad>", "<unk>", "<sos>", "<eos>", "I_JUMP", "I_LOOK", "I_RUN", "I_WALK"]
ORDER, CHANNELS, UNITS, TIME = 4, 3, 2, 5


def every_layer_model() -> keras.Model:
    ids = keras.Input(shape=(TIME,), dtype="int32", name="ids")
    embedded = GEmbed("verb", SOURCE, CHANNELS)(ids)
    convolved = GroupConv("verb", CHANNELS)(embedded)
    flat = keras.layers.Reshape((TIME, ORDER * CHANNELS))(convolved)
    states = keras.layers.RNN(GLSTMCell("verb", UNITS), return_sequences=True)(flat)
    states = keras.layers.Reshape((TIME, ORDER, UNITS))(states)
    logits = GDecode("verb", TARGET)(states)
    context, weights = GAttention()(states[:, -1], states)
    stack = keras.layers.RNN(StackLSTMCell(3, depth=4), return_sequences=True)(logits)
    read, _ = KeyValueMemory()(stack, stack, logits)
    return keras.Model(ids, [logits, context, weights, stack, read])


def inputs() -> np.ndarray:
    return np.random.default_rng(1).integers(0, len(SOURCE), size=(3, TIME)).astype("int32")


def outputs(model) -> dict:
    return {f"output_{i}": keras.ops.convert_to_numpy(y) for i, y in enumerate(model(inputs()))}


def main(argv):
    backend = keras.backend.backend()
    mode, out = argv[0], Path(argv[1])
    if mode == "save":
        model = every_layer_model()
        rng = np.random.default_rng(0)
        model.set_weights([rng.normal(scale=0.5, size=w.shape).astype("float32")
                           for w in model.weights])
        model.save(out / f"{backend}.keras")
        np.savez(out / f"{backend}.npz", **outputs(model))
    elif mode == "load":
        for path in map(Path, argv[2:]):
            model = keras.saving.load_model(path)
            np.savez(out / f"{path.stem}_on_{backend}.npz", **outputs(model))
    else:
        raise SystemExit(f"unknown mode {mode!r}: save or load")


if __name__ == "__main__":
    main(sys.argv[1:])
