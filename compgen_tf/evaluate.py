"""Exact-match accuracy of a trained run: `python -m compgen_tf.evaluate --run DIR`.

Prints train / validation / test accuracy, updates `DIR/metrics.json`, and writes
the wrongly translated examples to `DIR/errors_<split>.jsonl`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

from compgen_tf import registry
from compgen_tf.runs import EVALUATED_SPLITS, evaluate_run


def _run_model(run_dir) -> str:
    config = Path(run_dir) / "config.json"
    if not config.exists():
        raise FileNotFoundError(f"{config} does not exist: is {run_dir} a run directory "
                                "written by compgen_tf.train?")
    return json.loads(config.read_text()).get("model")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compgen_tf.evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="run directory written by compgen_tf.train")
    parser.add_argument("--splits", nargs="+", default=list(EVALUATED_SPLITS),
                        choices=EVALUATED_SPLITS)
    args = parser.parse_args(argv)
    try:
        model = _run_model(args.run)
        evaluate = (importlib.import_module(registry.TASK_MODELS[model]).evaluate_run
                    if model in registry.TASK_MODELS else evaluate_run)
        evaluate(args.run, splits=args.splits)
    except FileNotFoundError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
