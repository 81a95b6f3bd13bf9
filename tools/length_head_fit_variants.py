"""How the model's length head fits on `length_dev_unseen_clause`, alone: a diagnostic for issue 36.

    python tools/length_head_fit_variants.py --part fit [--without-eos]
        [--readout free|unit_norm|l1] [--seed 0] [--out FILE]

Builds the baseline with `configs/seq2seq/length_head.json` as `reproduce` does (seed set
before the model is built), fits its length head with `Seq2SeqModel.fit_length_head` (the
model's own settings) on the commands of `--part` ("fit": the training part without the
validation commands, as in a run; "train": all training commands), and prints the share of
test commands whose rounded count is the exact output length. `--without-eos` maps the
command's `<eos>` to padding (the head then reads the words only); `--readout unit_norm`
holds the readout to unit norm, `l1` adds an L1 penalty of 1e-3 on it
(docs/length_generalization.md, section 9). Development split only: no official test data.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from compgen_tf import registry  # noqa: E402
from compgen_tf.analysis.output import emit  # noqa: E402
from compgen_tf.experiments.config import config_path, load_config  # noqa: E402
from compgen_tf.experiments.scan import split_examples, vocabularies  # noqa: E402
from compgen_tf.tokens import EOS_ID, PAD_ID  # noqa: E402

SPLIT = "length_dev_unseen_clause"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--part", choices=("fit", "train"), default="fit")
    parser.add_argument("--without-eos", action="store_true")
    parser.add_argument("--readout", choices=("free", "unit_norm", "l1"), default="free")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    config = load_config(config_path("seq2seq", "length_head"))
    parts = {p: split_examples(SPLIT, p, config["data"], args.seed)
             for p in ("train", args.part, "test")}
    source, target = vocabularies(parts["train"])
    keras.utils.set_random_seed(args.seed)
    model = registry.build_model("seq2seq", config["model_args"], source, target)
    readout = model.length_head.readout
    if args.readout == "unit_norm":
        readout.constraint = keras.constraints.UnitNorm(axis=0)
    elif args.readout == "l1":
        readout.regularizer = keras.regularizers.L1(1e-3)

    def ids(examples):
        encoded = model.encode_commands(tf.constant([c for c, _ in examples]))[0].numpy()
        return np.where(encoded == EOS_ID, PAD_ID, encoded) if args.without_eos else encoded

    fit = parts[args.part]
    loss = model.fit_length_head(ids(fit), [len(a.split()) for _, a in fit], seed=args.seed)
    predicted = model.length_head(ids(parts["test"])).numpy()
    true = np.array([len(a.split()) for _, a in parts["test"]])
    result = {"split": SPLIT, "part": args.part, "reads_eos": not args.without_eos,
              "readout": args.readout, "seed": args.seed, "train_mse": loss,
              "test_exact_length": float(np.mean(np.round(predicted) == true)),
              "test_mean_absolute_error": float(np.mean(np.abs(predicted - true))),
              "provenance": {"kind": "validation", "reason": "a development split built from "
                             "the length training file; a diagnostic, no setting chosen"}}
    emit(result, args.out, "length_head_fit_variants.py", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
