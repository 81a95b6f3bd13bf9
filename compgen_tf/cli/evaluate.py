"""Exact-match accuracy of a trained run: `python -m compgen_tf evaluate --run DIR`.

Prints train / validation / test accuracy, updates `DIR/metrics.json`, and writes
the wrongly translated examples to `DIR/errors_<split>.jsonl` (SCAN and episode runs).
Any registered model's run: "train" is the run's training data less its validation carve
(episodes: its first 20 training episodes), "test" every test split of its task.
"""

from __future__ import annotations

import sys

from compgen_tf.cli.common import (ArgumentParser, import_tensorflow_quietly,
                               run_directory_missing)

SPLITS = ("train", "validation", "test")


def main(argv=None) -> int:
    """`python -m compgen_tf evaluate`: scores a run on `--splits` (its experiment's
    `evaluate`); exit code 0, or 2 when the run directory cannot be read."""
    parser = ArgumentParser(prog="python -m compgen_tf evaluate", description=__doc__)
    parser.add_argument("--run", required=True, help="run directory written by `train`")
    parser.add_argument("--splits", nargs="+", choices=SPLITS, default=list(SPLITS),
                        help="default: all three")
    args = parser.parse_args(argv)
    if run_directory_missing(args.run):
        return 2
    import_tensorflow_quietly()
    from compgen_tf.experiments.experiment import run_config
    from compgen_tf.experiments.kinds import experiment_for

    try:
        config = run_config(args.run)
        experiment_for(config["model"]).evaluate(args.run, splits=args.splits)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0
