"""How a trained SCAN model answers the one-word commands of its own training file.

    python tools/one_word_commands.py --run RUN_DIR [--out FILE]

Syntactic Attention's first add-jump failure mode ("a one-word command means I_JUMP",
docs/syntactic_attention.md) shows on training commands: the model answers every one-word
command from a boundary token, so the bare verbs of the training file (`walk`, `run`,
`look`) come out as I_JUMP. Their few copies barely move validation exact match, so this
script asks them directly: it translates every one-word command of the run's training file
(fit and validation parts: the whole file, never the test set) and records the attention of
the first output step on `<sos>`, the word and `<eos>`. Written for the design study of
docs/dev_splits.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    from compgen_tf.analysis.errors import AnalysisError
    from compgen_tf.analysis.one_word_commands import one_word_record, one_word_translations

    try:
        config, _, rows = one_word_translations(args.run)
    except AnalysisError as error:
        raise SystemExit(str(error)) from None
    record = one_word_record(args.run, config, rows,
                             f"python tools/one_word_commands.py --run {args.run}")
    for row in rows:
        print(f"{row['command']:>6} -> {row['translation']:<8} "
              f"{'ok' if row['correct'] else 'WRONG'}  first-step attention "
              + " ".join(f"{k} {v:.2f}" for k, v in row["first_step_attention"].items()))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
