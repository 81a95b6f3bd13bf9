"""Export a trained run as a TF Serving SavedModel: strings in, strings out.

    python -m compgen_tf export --run DIR --out serving/models/NAME/1

The `serving_default` signature takes `commands` (string, shape [batch]) and
returns `actions` (string, [batch]) and `error` (string, [batch]; empty when the
command was translated). Tokenization and greedy decoding run inside the graph,
so the SavedModel needs nothing but TensorFlow. A meta seq2seq model (`MetaSeq2Seq`)
takes one episode per call instead: `support_commands`, `support_actions` and
`query_commands` (strings, [n]), and returns `actions` and `error` for the queries.
The toy-task models read symbol ids, not strings: their runs are refused (exit code 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import keras
import tensorflow as tf

SIGNATURE_INPUT = "commands"
EPISODE_INPUTS = ("support_commands", "support_actions", "query_commands")


def export_model(model, out_dir) -> Path:
    """Writes `model` (a `Seq2SeqModel`) as a SavedModel with a `serving_default` signature."""
    out_dir = Path(out_dir)
    if out_dir.exists() and any(out_dir.iterdir()):
        raise FileExistsError(f"{out_dir} is not empty; TF Serving versions are immutable, "
                              "export to a new version directory")
    if not (hasattr(model, "serve") or hasattr(model, "serve_episode")):
        raise TypeError(f"{type(model).__name__} has no string signature to export: only the "
                        f"SCAN models and meta seq2seq translate strings (the toy-task models "
                        f"read symbol ids)")
    if not model.built:
        model.build()

    if hasattr(model, "serve_episode"):  # a meta seq2seq learner: one episode per call
        strings = [tf.TensorSpec([None], tf.string, name=name) for name in EPISODE_INPUTS]

        @tf.function(input_signature=strings)
        def serve(support_commands, support_actions, query_commands):
            return model.serve_episode(support_commands, support_actions, query_commands)
    else:
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name=SIGNATURE_INPUT)])
        def serve(commands):
            return model.serve(commands)

    archive = keras.export.ExportArchive()
    archive.track(model)
    archive.add_endpoint("serving_default", serve)
    archive.write_out(str(out_dir), verbose=False)
    return out_dir


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compgen_tf export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="run directory written by `train`")
    parser.add_argument("--out", required=True,
                        help="version directory to create, e.g. serving/models/scan/1")
    args = parser.parse_args(argv)
    from compgen_tf.experiments.experiment import load_run_model

    try:
        path = export_model(load_run_model(args.run), args.out)
    except (FileNotFoundError, FileExistsError, TypeError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"exported {args.run} to {path}")
    return 0

