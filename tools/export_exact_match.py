"""Does an exported SavedModel translate as its run did? Test exact match through the export.

    python tools/export_exact_match.py --export DIR --split SPLIT [--part test|train]
        [--batch 512] [--run RUN_DIR] [--out FILE]

SPLIT: a SCAN config of `tfds_scan` (official or development), not the English-French set.

Loads the SavedModel with `tf.saved_model.load` (as TF Serving does: the signature's graph,
no Keras objects; `compgen_tf.analysis.export_check` only sends and scores), sends every command of the split's part in batches of strings to its
`serving_default` signature and scores the `actions` it returns against the expected ones.
Also counts the rows that came back with an error. The figure should equal the run's own
`metrics.json` score: the export decodes with the same greedy decoding and, for a model with
a length head, the same counts.

With `--run` (the run the SavedModel was exported from, trained on SPLIT) every command is
also translated by the run's model in Python (`translate(..., return_errors=True)`) and the
two answers are compared row by row, action string and error (`python_agreement`: the
counts of rows that differ, and the first few); the run's own test score is recorded next
to the export's (`run_exact_match`), with the command that trained the run.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--export", required=True, help="a SavedModel directory")
    parser.add_argument("--split", required=True)
    parser.add_argument("--part", default="test", choices=("train", "test"))
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--run", help="the run directory the SavedModel was exported from: "
                                      "compare every row with its model's translate")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if not (Path(args.export) / "saved_model.pb").is_file():
        print(f"error: {args.export} has no saved_model.pb", file=sys.stderr)
        return 2
    if args.batch < 1:
        print(f"error: --batch must be positive, got {args.batch}", file=sys.stderr)
        return 2

    import tfds_scan
    from compgen_tf.analysis.export_check import exact_match_through, run_to_compare
    from compgen_tf.analysis.output import emit
    from compgen_tf.errors import CorruptRunFileError

    try:  # SCAN's configs and the development splits; not the English-French set
        pairs = tfds_scan.split_examples(args.split)[args.part]
        model, run = (None, {}) if args.run is None else run_to_compare(args.run, args.split,
                                                                        args.part)
    except (ValueError, FileNotFoundError, CorruptRunFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    emit({"export": args.export, "split": args.split, "part": args.part, **run,
          **exact_match_through(args.export, pairs, args.batch, model=model)},
         args.out, "export_exact_match.py", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
