"""Fits `counting_seq2seq`'s length head on TensorFlow and on JAX from the same weights and
compares the two: how far apart their weights drift, and where each fit ends.

    python tools/length_head_backends.py --seeds 0 1 2 --steps 20000 \\
        --drift-steps 5 20 50 200 --out results/checks/length_head_backends.json

For each seed the model of `configs/counting_seq2seq/default.json` is built on TensorFlow
after `keras.utils.set_random_seed(seed)` (the initial weights of that seed's runs) and saved;
then one process a backend loads it and fits its length head with
`Seq2SeqModel.fit_length_head` (the library's settings: Adam 3e-3 with a cosine decay,
gradients clipped to norm 1, batches of 256 in the order of the seeded shuffle) on the
commands and output lengths of SCAN's length training file, once for `--steps` updates
(the mean squared error at the end) and once for each of `--drift-steps` (the weights, to
measure the largest difference between the backends after that many updates; the first
seed only). Writes one JSON file. A check, not a result: it trains nothing but the head, and
chooses nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

BACKENDS = ("tensorflow", "jax")


def build(folder: Path, seeds) -> None:
    """The seeds' initial models, built on TensorFlow, into folder/model<seed>.keras."""
    import keras

    from compgen_tf import registry
    from compgen_tf.experiments.config import config_path, load_config
    from compgen_tf.models.preprocessor import vocabulary_words
    from tfds_scan.loader import load_pairs

    pairs = load_pairs("length", "train")
    config = load_config(config_path("counting_seq2seq", "default"))
    for seed in seeds:
        keras.utils.set_random_seed(seed)
        model = registry.build_model("counting_seq2seq", config["model_args"],
                                     vocabulary_words(c for c, _ in pairs),
                                     vocabulary_words(a for _, a in pairs))
        model.save(folder / f"model{seed}.keras")


def fit(folder: Path, seeds, steps: int, drift_steps) -> None:
    """This process's backend: each seed's head fitted for `steps` updates (its MSE in
    folder/<backend>.json) and, for the first seed, for each of `drift_steps` (its weights in
    folder/<backend>_<n>.npy)."""
    import keras
    import tensorflow as tf

    import compgen_tf.models  # noqa: F401  (registers the task models for load_model)
    from tfds_scan.loader import load_pairs

    backend = keras.backend.backend()
    pairs = load_pairs("length", "train")
    lengths = [len(a.split()) for _, a in pairs]
    records = []
    for seed in seeds:
        model = keras.saving.load_model(folder / f"model{seed}.keras")
        ids, _ = model.encode_commands(tf.constant([c for c, _ in pairs]))
        ids = np.asarray(ids)
        initial = [np.asarray(w.value) for w in model.length_head.weights]
        for count in (drift_steps if seed == seeds[0] else []):
            for weight, value in zip(model.length_head.weights, initial):
                weight.assign(value)
            model.fit_length_head(ids, lengths, steps=count, batch_size=256, seed=seed)
            np.save(folder / f"{backend}_{count}.npy",
                    np.concatenate([np.asarray(w.value).ravel()
                                    for w in model.length_head.weights]))
        for weight, value in zip(model.length_head.weights, initial):
            weight.assign(value)
        start = time.perf_counter()
        mse = model.fit_length_head(ids, lengths, steps=steps, batch_size=256, seed=seed)
        records.append({"seed": seed, "train_mse": mse,
                        "fit_s": round(time.perf_counter() - start, 1)})
    (folder / f"{backend}.json").write_text(json.dumps(records))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--drift-steps", type=int, nargs="*", default=[5, 20, 50, 200])
    parser.add_argument("--out", type=Path)
    parser.add_argument("--worker", nargs=1, metavar="FOLDER", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        fit(Path(args.worker[0]), args.seeds, args.steps, args.drift_steps)
        return 0
    if args.out is None:
        parser.error("--out is required")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        build(folder, args.seeds)
        fits = {}
        for backend in BACKENDS:
            env = dict(os.environ, KERAS_BACKEND=backend, TF_NUM_INTRAOP_THREADS="1",
                       TF_NUM_INTEROP_THREADS="1", TF_CPP_MIN_LOG_LEVEL="3",
                       JAX_PLATFORMS="cpu")
            command = [sys.executable, __file__, "--worker", str(folder), "--steps",
                       str(args.steps), "--seeds", *map(str, args.seeds),
                       "--drift-steps", *map(str, args.drift_steps)]
            subprocess.run(command, env=env, check=True)
            fits[backend] = json.loads((folder / f"{backend}.json").read_text())
        drift = {str(count): float(np.max(np.abs(np.load(folder / f"tensorflow_{count}.npy")
                                                   - np.load(folder / f"jax_{count}.npy"))))
                 for count in args.drift_steps}
    result = {
        "check": "tools/length_head_backends.py " + " ".join(argv or sys.argv[1:]),
        "what": "counting_seq2seq's length head fitted alone (fit_length_head) from the same "
                "weights and batches on TensorFlow and JAX, on SCAN's length training file",
        "provenance": {"kind": "check",
                       "reason": "the committed configuration's length head fitted as its "
                                 "runs fit it, on training commands only; nothing chosen, no "
                                 "test split read"},
        "largest_weight_difference_after": drift,
        "train_mse": {backend: {str(r["seed"]): r["train_mse"] for r in records}
                      for backend, records in fits.items()},
        "fit_seconds": {backend: {str(r["seed"]): r["fit_s"] for r in records}
                        for backend, records in fits.items()},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
