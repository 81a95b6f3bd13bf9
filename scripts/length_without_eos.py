"""Does a decoder that never learns to stop extrapolate better? A probe for issue 36.

    python scripts/length_without_eos.py --split length_dev --seed 0 --run RUN_DIR
        [--model seq2seq] [--config FILE] [--lengths FILE] [--out FILE]
    python scripts/length_without_eos.py --collect SEED_FILE... --out FILE

Newman et al. (2020), "The EOS decision and length extrapolation", train seq2seq models
without the `<eos>` target (-EOS) and decode them to the true length. This trains the
library's `--model` on `--split` with its committed configuration through the library's own
`fit` path (`compgen_tf.training.fit.fit_run`), with two changes:
- the loss leaves out the `<eos>` targets, so nothing in training teaches the decoder when to
  stop;
- model selection scores validation (carved from train) decoded to each command's true
  length, since free decoding of such a model never ends.
The test split is then decoded with the true lengths (the oracle, a diagnostic) and, with
`--lengths` ({command: length}, from `scripts/length_automaton.py --predictions`), with
lengths learned from the training commands, which is no oracle. Prints one JSON line.
Comparison: the same model trained with `<eos>` and decoded with the true length
(`scripts/length_oracle_decoding.py`, docs/length_generalization.md section 3).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from compgen_tf import registry  # noqa: E402
from compgen_tf.experiments.config import config_path, load_config  # noqa: E402
from compgen_tf.experiments.experiment import load_run_model, prepare_run_dir  # noqa: E402
from compgen_tf.experiments.scan import split_examples, vocabularies  # noqa: E402
from compgen_tf.training.data import encode_split  # noqa: E402
from compgen_tf.training.batches import SplitBatches  # noqa: E402
from compgen_tf.training.fit import TRAINING_DEFAULTS, fit_run, training_settings  # noqa: E402
from compgen_tf.training.losses import token_cross_entropy  # noqa: E402
from compgen_tf.tokens import EOS_ID, PAD_ID  # noqa: E402
from length_oracle_decoding import decode_with_length  # noqa: E402
from script_output import emit  # noqa: E402


# The probe's settings are the model's committed configuration; it runs on development
# splits built from training data only.
PROVENANCE = {"kind": "validation", "reason": "a development split built from training data; "
              "the model's committed configuration, no setting chosen on a test score"}


def without_eos_loss(model):
    """Makes `model`'s training loss leave out its `<eos>` targets (the decoder still reads
    the same inputs: `<sos>` and the actions)."""
    def token_loss(data, training=True, seed=None):
        source_ids, target_ids = data
        logits = model.compute_logits(source_ids, target_ids, training=training,
                                      teacher_forcing_ratio=model.teacher_forcing_ratio,
                                      seed=seed)
        return token_cross_entropy(tf.where(tf.equal(target_ids, EOS_ID), PAD_ID, target_ids),
                                   logits)
    model.token_loss = token_loss


def exact_match_at_lengths(model, commands, expected, lengths, batch_size=512):
    """Exact match of `commands` decoded to `lengths` actions each."""
    right = []
    for start in range(0, len(commands), batch_size):
        batch = slice(start, start + batch_size)
        source_ids, _ = model.encode_commands(commands[batch])
        ids = decode_with_length(model, source_ids, lengths[batch], model.max_output_length)
        actions, _ = model.decode_actions(ids)
        right += [a.decode() == e for a, e in zip(actions.numpy(), expected[batch])]
    return float(np.mean(right))


def collect(files, out, argv) -> int:
    """Summarises per-seed probe results (one JSON line each) over the seeds."""
    runs = [json.loads(Path(f).read_text()) for f in sorted(files)]
    result = {"probe": "length_without_eos", "model": runs[0]["model"],
              "split": runs[0]["split"], "provenance": PROVENANCE, "seeds": runs}
    for key in ("test_given_lengths", "test_true_length"):
        values = [run[key] for run in runs if key in run]
        if values:
            result[f"summary_{key}"] = {
                "n": len(values), "mean": float(np.mean(values)),
                "std": float(np.std(values, ddof=1)) if len(values) > 1 else 0.0,
                "median": float(np.median(values)), "min": min(values), "max": max(values)}
    emit(result, out, "length_without_eos.py", argv)
    return 0


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
        return collect(args.collect, args.out, argv)
    if not (args.split and args.run):
        parser.error("--split and --run are required (or --collect)")
    config = load_config(args.config or config_path(args.model, args.split))
    config.update(model=args.model, split=args.split)
    data, seed, run_dir = config["data"], args.seed, Path(args.run)
    prepare_run_dir(run_dir, dict(config, seed=seed, probe="length_without_eos"))
    examples = {part: split_examples(args.split, part, data, seed)
                for part in ("train", "fit", "validation", "test")}
    source, target = vocabularies(examples["train"])
    keras.utils.set_random_seed(seed)
    model = registry.build_model(args.model, config["model_args"], source, target,
                                 train_commands=[c for c, _ in examples["train"]])
    without_eos_loss(model)
    validation = examples["validation"]
    commands = [c for c, _ in validation]
    expected = [a for _, a in validation]
    lengths = [len(a.split()) for a in expected]
    settings = training_settings(config["training"], TRAINING_DEFAULTS, "every")
    batches = SplitBatches(encode_split(model, examples["fit"]), settings["batch_size"], seed,
                           data.get("length_bucket", 8))
    summary = fit_run(model, config["training"], run_dir, batches,
                      lambda m: exact_match_at_lengths(m, commands, expected, lengths),
                      seed=seed, verbose=0)
    best = load_run_model(run_dir)
    test = examples["test"]
    test_commands, test_expected = [c for c, _ in test], [a for _, a in test]
    result = {"probe": "length_without_eos", "model": args.model, "split": args.split,
              "seed": seed, "run": str(run_dir), **summary,
              "selection": "validation exact match, decoded to the true lengths",
              "provenance": PROVENANCE,
              "validation_true_length": exact_match_at_lengths(best, commands, expected,
                                                               lengths),
              "test_true_length": exact_match_at_lengths(
                  best, test_commands, test_expected, [len(a.split()) for a in test_expected])}
    if args.lengths:
        given = json.loads(Path(args.lengths).read_text())
        result["lengths_file"] = args.lengths
        result["test_given_lengths"] = exact_match_at_lengths(
            best, test_commands, test_expected, [int(given[c]) for c in test_commands])
    emit(result, args.out, "length_without_eos.py", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
