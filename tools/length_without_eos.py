"""Does a decoder that never learns to stop extrapolate better? A probe for issue 36.

    python tools/length_without_eos.py --split length_dev --seed 0 --run RUN_DIR
        [--model seq2seq] [--config FILE] [--lengths FILE] [--out FILE]
    python tools/length_without_eos.py --collect SEED_FILE... --out FILE

Newman et al. (2020), "The EOS decision and length extrapolation", train seq2seq models
without the `<eos>` target (-EOS) and decode them to the true length. This trains the
library's `--model` on `--split` with its committed configuration through the library's own
`fit` path (`compgen_tf.training.fit.fit_run`), with two changes:
- the loss leaves out the `<eos>` targets, so nothing in training teaches the decoder when to
  stop;
- model selection scores validation (carved from train) decoded to each command's true
  length, since free decoding of such a model never ends.
The test split is then decoded with the true lengths (the oracle, a diagnostic) and, with
`--lengths` ({command: length}, from `tools/length_automaton.py --predictions`), with
lengths learned from the training commands, which is no oracle. Prints one JSON line.
Comparison: the same model trained with `<eos>` and decoded with the true length
(`tools/length_oracle_decoding.py`, docs/length_generalization.md section 3).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from compgen_tf.analysis.output import emit  # noqa: E402
from compgen_tf.analysis.without_eos import collected, probe_run  # noqa: E402
from compgen_tf.experiments.config import config_path, load_config  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split")
    parser.add_argument("--model", default="seq2seq")
    parser.add_argument("--config", help="default: the model's committed config for the split")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--run", help="run directory (resumes if it exists)")
    parser.add_argument("--collect", nargs="+", metavar="FILE",
                        help="instead: the per-seed JSON files of earlier probes, summarised "
                             "(mean, std, median, min, max, n) into --out")
    parser.add_argument("--lengths", help="JSON {command: length} for the test commands")
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)
    if args.collect:
        emit(collected(args.collect), args.out, "length_without_eos.py", argv)
        return 0
    if not (args.split and args.run):
        parser.error("--split and --run are required (or --collect)")
    config = load_config(args.config or config_path(args.model, args.split))
    result = probe_run(args.model, args.split, config, args.seed, Path(args.run), args.lengths)
    emit(result, args.out, "length_without_eos.py", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
