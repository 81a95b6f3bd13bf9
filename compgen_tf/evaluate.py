"""Exact-match accuracy of a trained run: `python -m compgen_tf.evaluate --run DIR`.

Prints train / validation / test accuracy, updates `DIR/metrics.json`, and writes
the wrongly translated examples to `DIR/errors_<split>.jsonl`.
"""

from __future__ import annotations

import argparse
import sys

from compgen_tf.runs import EVALUATED_SPLITS, evaluate_run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compgen_tf.evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="run directory written by compgen_tf.train")
    parser.add_argument("--splits", nargs="+", default=list(EVALUATED_SPLITS),
                        choices=EVALUATED_SPLITS)
    args = parser.parse_args(argv)
    try:
        evaluate_run(args.run, splits=args.splits)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
