"""Does a run in the paper's regime repeat, and resume, exactly on one machine?

    python scripts/check_resume_exact.py [--config FILE] [--steps N] [--out FILE]

Trains a small Syntactic Attention model with the `training` settings of `--config`
(default: `configs/syntactic_attention/paper_regime.json`: batch 1, no clipping,
XLA-compiled, unrolled steps) and its dropout, on the SCAN commands of at most three words,
three times in fresh run directories of a temporary folder:
- straight through `--steps` updates;
- the same again (does the run repeat?);
- killed half a checkpoint interval after its third checkpoint (a run checkpoints every
  `--steps // 6` updates), then run again with the same call, which resumes from that
  checkpoint (does the resumed run equal the straight one?).
Prints one JSON line: the largest absolute difference between the final weights of each pair
and the logged training losses. The sizes are small so that it runs in minutes; the path
(`compgen_tf.training.fit.fit_split`, the train step, the checkpoints) is the one every run
takes. It checks one machine: two machines may pick other kernels
(docs/reproducibility.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from script_output import emit  # noqa: E402

SMALL_MODEL = {"semantic_dim": 8, "syntax_embedding_dim": 8, "syntax_units": 8,
               "encoder_units": 8, "max_output_length": 12}


def train(run_dir: Path, config: dict, steps: int, every: int, stop_after: int | None = None):
    """The small model trained in `run_dir` with `config["training"]` for `steps` updates,
    checkpointing every `every`; with `stop_after`, a KeyboardInterrupt after that many
    updates stands for a killed process."""
    import keras

    import tfds_scan
    from compgen_tf.models import SyntacticAttention
    from compgen_tf.training.data import encode_split
    from compgen_tf.training.fit import fit_split
    from compgen_tf.models.preprocessor import vocabulary_words

    class StopAfter(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if int(self.model.optimizer.iterations.numpy()) >= stop_after:
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
    import numpy as np

    return max(float(np.max(np.abs(x.numpy() - y.numpy()))) for x, y in zip(a.weights, b.weights))


def losses(run_dir: Path) -> list:
    return [[row["step"], row["loss"]] for row in
            map(json.loads, (run_dir / "history.jsonl").read_text().splitlines())]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/syntactic_attention/paper_regime.json")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.steps < 12:
        print(f"error: --steps must be at least 12 (got {args.steps}): the run is stopped "
              "between two checkpoints", file=sys.stderr)
        return 2

    from compgen_tf.experiments.config import load_config
    from compgen_tf.versions import package_versions

    config = load_config(args.config)
    every = args.steps // 6
    stop_after = 3 * every + every // 2
    with tempfile.TemporaryDirectory() as folder:
        runs = {name: Path(folder) / name for name in ("straight", "repeat", "resumed")}
        straight = train(runs["straight"], config, args.steps, every)
        repeat = train(runs["repeat"], config, args.steps, every)
        try:
            train(runs["resumed"], config, args.steps, every, stop_after=stop_after)
            raise RuntimeError(f"the run was not stopped after {stop_after} updates")
        except KeyboardInterrupt:
            pass
        resumed = train(runs["resumed"], config, args.steps, every)
        result = {
            "what": "whether a small Syntactic Attention model trained with --config's "
                    "training settings repeats, and resumes after a kill between two "
                    "checkpoints, to the last bit on this machine",
            "config": args.config, "training": config["training"], "model": SMALL_MODEL,
            "steps": args.steps, "checkpoint_every": every, "stopped_after": stop_after,
            "largest_weight_difference": {
                "straight_vs_repeat": largest_difference(straight, repeat),
                "straight_vs_resumed": largest_difference(straight, resumed)},
            "losses": {name: losses(path) for name, path in runs.items()},
            "provenance": {"kind": "diagnosis",
                           "reason": "checks the training path's determinism; no setting "
                                     "is chosen with it"},
            "versions": package_versions(),
        }
    emit(result, args.out, "check_resume_exact.py", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
