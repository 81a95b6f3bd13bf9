"""Does a decoder that never learns to stop extrapolate better? The probe of issue 36.

Newman et al. (2020), "The EOS decision and length extrapolation", train seq2seq models
without the `<eos>` target (-EOS) and decode them to the true length. `probe_run` trains a
registered SCAN model with its committed configuration through the library's own `fit` path
(`compgen_tf.training.fit.fit_run`), with two changes:
- the loss leaves out the `<eos>` targets, so nothing in training teaches the decoder when to
  stop;
- model selection scores validation (carved from train) decoded to each command's true
  length, since free decoding of such a model never ends.
The test split is then decoded with the true lengths (the oracle, a diagnostic) and,
optionally, with lengths learned from the training commands, which is no oracle
(`tools/length_without_eos.py`, docs/length_generalization.md section 3).
"""

from __future__ import annotations

import json
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from compgen_tf import registry
from compgen_tf.analysis.length_oracle import decode_with_length
from compgen_tf.experiments.experiment import load_run_model, prepare_run_dir
from compgen_tf.experiments.scan import split_examples, vocabularies
from compgen_tf.training.batches import SplitBatches
from compgen_tf.training.data import encode_split
from compgen_tf.training.fit import as_training_config, fit_run
from compgen_tf.models.losses import token_cross_entropy
from compgen_tf.tokens import EOS_ID, PAD_ID

# The probe's settings are the model's committed configuration; it runs on development
# splits built from training data only.
PROVENANCE = {"kind": "validation", "reason": "a development split built from training data; "
              "the model's committed configuration, no setting chosen on a test score"}


def without_eos_loss(model):
    """Makes `model`'s training loss leave out its `<eos>` targets.

    The decoder still reads the same inputs (`<sos>` and the actions); only the loss of the
    `<eos>` targets, and their count, are left out.

    Args:
        model: a SCAN model with `compute_logits` and `token_loss`; its `token_loss` is
            replaced.

    Returns:
        None.
    """
    def token_loss(data, training=True, seed=None):
        source_ids, target_ids = data
        logits = model.compute_logits(source_ids, target_ids, training=training,
                                      teacher_forcing_ratio=model.teacher_forcing_ratio,
                                      seed=seed)
        return token_cross_entropy(tf.where(tf.equal(target_ids, EOS_ID), PAD_ID, target_ids),
                                   logits)
    model.token_loss = token_loss


def exact_match_at_lengths(model, commands, expected, lengths, batch_size=512):
    """Exact match of `commands` decoded to `lengths` actions each.

    Args:
        model: a SCAN model with a recurrent decoder.
        commands: the commands.
        expected: their expected actions.
        lengths: the number of actions to decode for each.
        batch_size: commands decoded at once.

    Returns:
        The share of commands decoded exactly right, a float.
    """
    right = []
    for start in range(0, len(commands), batch_size):
        batch = slice(start, start + batch_size)
        source_ids, _ = model.encode_commands(commands[batch])
        ids = decode_with_length(model, source_ids, lengths[batch], model.max_output_length)
        actions, _ = model.decode_actions(ids)
        right += [a.decode() == e for a, e in zip(actions.numpy(), expected[batch])]
    return float(np.mean(right))


def probe_run(model_name: str, split: str, config: dict, seed: int, run_dir: Path,
              lengths_file=None) -> dict:
    """Trains and scores one seed of the probe (resuming `run_dir` if it exists).

    Args:
        model_name: a registered SCAN model.
        split: a SCAN split (a development split: the probe reads its test part).
        config: the model's configuration for the split (`load_config`).
        seed: the run's seed.
        run_dir: the run directory.
        lengths_file: a JSON `{command: length}` for the test commands, or None.

    Returns:
        The fit's summary with exact match of validation and test decoded to the true
        lengths and, with `lengths_file`, of test decoded to those lengths.
    """
    config = dict(config, model=model_name, split=split)
    data = config["data"]
    prepare_run_dir(run_dir, dict(config, seed=seed, probe="length_without_eos"))
    examples = {part: split_examples(split, part, data, seed)
                for part in ("train", "fit", "validation", "test")}
    source, target = vocabularies(examples["train"])
    keras.utils.set_random_seed(seed)
    model = registry.build_model(model_name, config["model_args"], source, target,
                                 train_commands=[c for c, _ in examples["train"]])
    without_eos_loss(model)
    validation = examples["validation"]
    commands = [c for c, _ in validation]
    expected = [a for _, a in validation]
    lengths = [len(a.split()) for a in expected]
    settings = as_training_config(config["training"])
    batches = SplitBatches(encode_split(model, examples["fit"]), settings.batch_size, seed,
                           data.get("length_bucket", 8))
    summary = fit_run(model, settings, run_dir, batches,
                      lambda m: exact_match_at_lengths(m, commands, expected, lengths),
                      seed=seed, verbose=0)
    best = load_run_model(run_dir)
    test = examples["test"]
    test_commands, test_expected = [c for c, _ in test], [a for _, a in test]
    result = {"probe": "length_without_eos", "model": model_name, "split": split,
              "seed": seed, "run": str(run_dir), **summary,
              "selection": "validation exact match, decoded to the true lengths",
              "provenance": PROVENANCE,
              "validation_true_length": exact_match_at_lengths(best, commands, expected,
                                                               lengths),
              "test_true_length": exact_match_at_lengths(
                  best, test_commands, test_expected, [len(a.split()) for a in test_expected])}
    if lengths_file:
        given = json.loads(Path(lengths_file).read_text())
        result["lengths_file"] = lengths_file
        result["test_given_lengths"] = exact_match_at_lengths(
            best, test_commands, test_expected, [int(given[c]) for c in test_commands])
    return result


def collected(files) -> dict:
    """Summarises per-seed probe results (one JSON line each) over the seeds.

    Args:
        files: the per-seed JSON files of `probe_run` results.

    Returns:
        The seeds' results (in file-name order) with, for the test scores present, their
        n, mean, std (ddof 1), median, min and max.
    """
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
    return result
