"""Does an exported SavedModel translate as its run did? Test exact match through the export.

    python scripts/export_exact_match.py --export DIR --split SPLIT [--part test|train]
        [--batch 512] [--out FILE]

SPLIT: a SCAN config of `tfds_scan` (official or development), not the English-French set.

Loads the SavedModel with TensorFlow alone (as TF Serving does: no compgen_tf, no Keras
objects), sends every command of the split's part in batches of strings to its
`serving_default` signature and scores the `actions` it returns against the expected ones.
Also counts the rows that came back with an error. The figure should equal the run's own
`metrics.json` score: the export decodes with the same greedy decoding and, for a model with
a length head, the same counts.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from script_output import emit  # noqa: E402


def translate_through(signature, commands, batch):
    """(actions, errors) of `commands` from a loaded `serving_default` signature."""
    import tensorflow as tf

    actions, errors = [], []
    for start in range(0, len(commands), batch):
        answer = signature(commands=tf.constant(commands[start:start + batch]))
        actions += [a.decode() for a in answer["actions"].numpy()]
        errors += [e.decode() for e in answer["error"].numpy()]
    return actions, errors


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--export", required=True, help="a SavedModel directory")
    parser.add_argument("--split", required=True)
    parser.add_argument("--part", default="test", choices=("train", "test"))
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if not (Path(args.export) / "saved_model.pb").is_file():
        print(f"error: {args.export} has no saved_model.pb", file=sys.stderr)
        return 2
    if args.batch < 1:
        print(f"error: --batch must be positive, got {args.batch}", file=sys.stderr)
        return 2

    import tensorflow as tf
    import tfds_scan

    try:  # SCAN's configs and the development splits; not the English-French set
        pairs = tfds_scan.split_examples(args.split)[args.part]
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    signature = tf.saved_model.load(args.export).signatures["serving_default"]
    actions, errors = translate_through(signature, [c for c, _ in pairs], args.batch)
    right = sum(got == expected for got, (_, expected) in zip(actions, pairs))
    emit({"export": args.export, "split": args.split, "part": args.part,
          "commands": len(pairs), "exact_match": right / len(pairs),
          "rows_with_error": sum(bool(e) for e in errors)},
         args.out, "export_exact_match.py", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
