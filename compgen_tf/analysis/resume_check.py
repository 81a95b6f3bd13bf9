"""Does a run in the paper's regime repeat, and resume, exactly on one machine?

`resume_exactness` trains a small Syntactic Attention model with the `training` settings of a
configuration and its dropout, on the SCAN commands of at most three words, three times in
fresh run directories of a temporary folder:
- straight through `steps` updates;
- the same again (does the run repeat?);
- killed half a checkpoint interval after its third checkpoint (a run checkpoints every
  `steps // 6` updates), then run again with the same call, which resumes from that
  checkpoint (does the resumed run equal the straight one?).
The sizes are small so that it runs in minutes; the path (`compgen_tf.training.fit.fit_split`,
the train step, the checkpoints) is the one every run takes. It checks one machine: two
machines may pick other kernels (docs/reproducibility.md; `tools/check_resume_exact.py`).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import keras
import numpy as np

import tfds_scan
from compgen_tf.experiments.config import load_config
from compgen_tf.models import SyntacticAttention
from compgen_tf.models.preprocessor import vocabulary_words
from compgen_tf.training.data import encode_split
from compgen_tf.training.fit import fit_split
from compgen_tf.versions import package_versions

SMALL_MODEL = {"semantic_dim": 8, "syntax_embedding_dim": 8, "syntax_units": 8,
               "encoder_units": 8, "max_output_length": 12}
# A run is stopped between two checkpoints, the third and fourth of six.
MIN_STEPS = 12


def train(run_dir: Path, config: dict, steps: int, every: int, stop_after: int | None = None):
    """The small model trained in `run_dir` with `config["training"]`.

    Args:
        run_dir: the run directory (a run there is resumed).
        config: a configuration; its `training` section and `model_args.dropout` are used.
        steps: the updates of the whole run.
        every: the updates between two checkpoints.
        stop_after: with a number, a KeyboardInterrupt after that many updates stands for a
            killed process.

    Returns:
        The trained model.
    """
    class StopAfter(keras.callbacks.Callback):
        # Counts the updates (on JAX the optimizer's step is not readable between two
        # batches of a fit epoch).
        def on_train_begin(self, logs=None):
            self.step = int(self.model.optimizer.iterations.numpy())

        def on_train_batch_end(self, batch, logs=None):
            self.step += 1
            if self.step >= stop_after:
                raise KeyboardInterrupt

    examples = [(c, tfds_scan.interpret(c)) for c in tfds_scan.all_commands()
                if len(c.split()) <= 3]
    keras.utils.set_random_seed(0)
    model = SyntacticAttention.from_words(
        vocabulary_words(c for c, _ in examples), vocabulary_words(a for _, a in examples),
        dropout=config["model_args"].get("dropout", 0.0), **SMALL_MODEL)
    split = encode_split(model, examples)
    # Every run trains all `steps` updates: no early stop (patience, an unreachable target).
    settings = dict(config["training"], max_steps=steps, eval_every=2 * every,
                    checkpoint_every=every, patience=steps, stop_at_accuracy=1.1)
    callbacks = [StopAfter()] if stop_after else []
    fit_split(model, settings, run_dir, split, split, seed=3, verbose=0, callbacks=callbacks)
    return model


def largest_difference(a, b) -> float:
    """The largest absolute difference between two models' weights.

    Args:
        a: a model.
        b: a model with the same weights' shapes, in the same order.

    Returns:
        The largest absolute difference over all weights, a float.
    """
    return max(float(np.max(np.abs(x.numpy() - y.numpy()))) for x, y in zip(a.weights, b.weights))


def losses(run_dir: Path) -> list:
    """The logged training losses of a run.

    Args:
        run_dir: a run directory with `history.jsonl`.

    Returns:
        `[[step, loss], ...]` in the order logged.
    """
    return [[row["step"], row["loss"]] for row in
            map(json.loads, (Path(run_dir) / "history.jsonl").read_text().splitlines())]


def resume_exactness(config_file: str, steps: int) -> dict:
    """Trains the small model straight, again, and killed and resumed; compares the three.

    Args:
        config_file: the configuration whose `training` settings are used.
        steps: the updates of each run, at least `MIN_STEPS`.

    Returns:
        The settings, the largest weight difference of straight vs repeat and of straight vs
        resumed, the three runs' logged losses, provenance and package versions.

    Raises:
        ValueError: `steps` is below `MIN_STEPS`.
    """
    if steps < MIN_STEPS:
        raise ValueError(f"steps must be at least {MIN_STEPS}, got {steps}")
    config = load_config(config_file)
    every = steps // 6
    stop_after = 3 * every + every // 2
    with tempfile.TemporaryDirectory() as folder:
        runs = {name: Path(folder) / name for name in ("straight", "repeat", "resumed")}
        straight = train(runs["straight"], config, steps, every)
        repeat = train(runs["repeat"], config, steps, every)
        try:
            train(runs["resumed"], config, steps, every, stop_after=stop_after)
            raise RuntimeError(f"the run was not stopped after {stop_after} updates")
        except KeyboardInterrupt:
            pass
        resumed = train(runs["resumed"], config, steps, every)
        return {
            "what": "whether a small Syntactic Attention model trained with --config's "
                    "training settings repeats, and resumes after a kill between two "
                    "checkpoints, to the last bit on this machine",
            "config": config_file, "training": config["training"], "model": SMALL_MODEL,
            "steps": steps, "checkpoint_every": every, "stopped_after": stop_after,
            "largest_weight_difference": {
                "straight_vs_repeat": largest_difference(straight, repeat),
                "straight_vs_resumed": largest_difference(straight, resumed)},
            "losses": {name: losses(path) for name, path in runs.items()},
            "provenance": {"kind": "diagnosis",
                           "reason": "checks the training path's determinism; no setting "
                                     "is chosen with it"},
            "versions": package_versions(),
        }
