"""Runs on a SCAN split: `SCAN`, the experiment of the SCAN models.

A run directory holds `config.json` (the resolved configuration),
`source_vocabulary.json` / `target_vocabulary.json`, `checkpoints/`,
`best_model.keras`, `history.jsonl`, `logs/` (TensorBoard), `metrics.json`, and
`errors_<split>.jsonl` (the wrongly translated examples of each split).

The same experiment trains the SCAN models on the English-French set (`--split mt_eng_fra`
and the other `tfds_scan.MT_CONFIG_NAMES`). There a source word that training never saw
becomes `<unk>` instead of an error, the metrics add BLEU both ways
(`compgen_tf.training.bleu.translation_scores`) to exact match, and the `daxy` split (the
8 sentences of Lake & Baroni's novel-word test) is scored too, its translations listed.

The baseline also trains on the composition task of "Symmetry and systematicity"
(`--model seq2seq --split composition`): the standard LSTM encoder-decoder of the SCAN
papers beside that paper's baselines. Its pairs are those of the toy task, drawn with the
run's seed, so seed N sees the data of the toy models' seed N.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

import tfds_scan
from compgen_tf import registry
from compgen_tf.experiments.toy import TOY_PAIR_SPLITS, composition_pairs
from compgen_tf.experiments.experiment import (Experiment, account_warm_start,
                                               load_run_model, prepare_run_dir, start_from)
from compgen_tf.models.preprocessor import vocabulary_words
from compgen_tf.training.bleu import translation_scores
from compgen_tf.training.data import encode_split
from compgen_tf.training.distribute import is_chief, wait_for_workers, worker_index
from compgen_tf.training.evaluation import evaluate_split
from compgen_tf.training.fit import TRAINING_DEFAULTS, fit_split, training_settings
from compgen_tf.versions import package_versions

EVALUATED_SPLITS = ("train", "validation", "test")
MT_EVALUATED_SPLITS = EVALUATED_SPLITS + ("daxy",)


def is_translation(split: str) -> bool:
    """Whether `split` names a config of the English-French set rather than of SCAN."""
    return split in tfds_scan.MT_CONFIG_NAMES


def evaluated_splits(split: str) -> tuple:
    """The parts a run on `split` is scored on by default: train, validation and test, and
    daxy on an English-French split (`--evaluate-splits` chooses among them)."""
    return MT_EVALUATED_SPLITS if is_translation(split) else EVALUATED_SPLITS


def split_examples(split: str, part: str, data: dict, seed: int = 0):
    """Examples of `part` ("fit", "train", "validation" or "test") of a SCAN split, read
    through the repository's TFDS builder (`tfds_scan.load`, built offline on first use).
    `seed` is the draw of a toy split (`TOY_PAIR_SPLITS`); a SCAN split has one."""
    if split in TOY_PAIR_SPLITS:
        if data.get("validation_carve", "random") != "random":
            raise ValueError(f"the {split} split carves its validation pairs at random; "
                             f"data.validation_carve {data['validation_carve']!r} does not apply")
        return composition_pairs(seed, data)[part]
    return tfds_scan.load_pairs(split, part,
                                validation_fraction=data.get("validation_fraction", 0.1),
                                validation_seed=data.get("validation_seed", 0),
                                validation_carve=data.get("validation_carve", "random"))


def train_run(config: dict, run_dir, seed: int = 0, verbose: int = 1, command: str = "",
              evaluate_splits=None, strategy=None,
              warm_start_from=None, model=None) -> dict | None:
    """Trains `config["model"]` on `config["split"]`, then evaluates it; returns the metrics.

    Re-running with the same run directory resumes; a finished run is only re-evaluated.
    `warm_start_from`: a run directory of the same model and seed (a Hyperband trial's
    parent) whose last checkpoint this run continues from, up to its own `max_steps`;
    recorded in the metrics as `warm_start` (used only when `run_dir` has no checkpoint yet).
    `evaluate_splits` names the splits scored after training (tuning leaves out "test";
    default `evaluated_splits(config["split"])`).
    `model`: the model to train, from `SCAN.build(config, seed)` (default: built here so).
    `strategy` is a `tf.distribute` strategy (`compgen_tf.training.distribute.make_strategy`). Under
    `multi_worker` only the chief writes `run_dir` and evaluates; every other worker keeps
    its checkpoints in `run_dir/.worker<N>` until training ends, and returns None.
    """
    run_dir = Path(run_dir)
    strategy = strategy or tf.distribute.get_strategy()
    chief_dir = run_dir
    if not is_chief(strategy):
        run_dir = run_dir / f".worker{worker_index(strategy)}"
    prepare_run_dir(run_dir, dict(config, seed=seed))

    data = config["data"]
    examples = {part: split_examples(config["split"], part, data, seed)
                for part in ("train", "fit", "validation")}
    source, target = vocabularies(examples["train"])
    for side, words in (("source", source), ("target", target)):
        (run_dir / f"{side}_vocabulary.json").write_text(
            json.dumps({"name": side, "words": words}, indent=1) + "\n")
    if model is None:
        # Seeded right before the model is built: building the TFDS dataset on first use
        # draws from the global random generators, and the initial weights must not depend
        # on whether this process built it.
        keras.utils.set_random_seed(seed)
        with strategy.scope():
            model = registry.build_model(config["model"], config["model_args"], source,
                                         target,
                                         train_commands=[c for c, _ in examples["train"]])
    fit = encode_split(model, examples["fit"])
    validation = encode_split(model, examples["validation"])
    extend = start_from(warm_start_from, run_dir)
    head_loss = None
    if getattr(model, "length_head_args", None) is not None:
        with strategy.scope():
            head_loss = prepare_length_head(model, examples["fit"], run_dir,
                                            config["training"], seed)
    summary = fit_split(model, config["training"], run_dir, fit, validation, seed=seed,
                        length_bucket=data.get("length_bucket", 8), strategy=strategy,
                        verbose=verbose, extend=extend)
    if head_loss is not None:
        summary["length_head_fit_loss"] = head_loss
    if run_dir != chief_dir:
        shutil.rmtree(run_dir)
        wait_for_workers(strategy)
        return None
    metrics = evaluate_run(run_dir, splits=evaluate_splits, verbose=verbose, model=model)
    account_warm_start(run_dir, summary, metrics)
    metrics.update(summary, command=command)
    (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    wait_for_workers(strategy)
    return metrics


LENGTH_HEAD_WEIGHTS = "length_head.npz"


def prepare_length_head(model, fit_examples, run_dir, training, seed):
    """Fits `model`'s length head on the commands and output lengths of `fit_examples`
    before the decoder trains (`Seq2SeqModel.fit_length_head`, settings `training.length_head_*`),
    and freezes it. The fitted weights are kept in `run_dir/length_head.npz`: a resumed run
    loads them instead of fitting again. Returns the head's mean squared error on them."""
    path = Path(run_dir) / LENGTH_HEAD_WEIGHTS
    if path.exists():
        with np.load(path) as saved:
            model.length_head.set_weights([saved[f"w{i}"] for i in range(len(saved.files) - 1)])
            model.length_head.trainable = False
            return float(saved["loss"])
    settings = training_settings(training, TRAINING_DEFAULTS, "every")
    source_ids, _ = model.encode_commands(tf.constant([c for c, _ in fit_examples]))
    loss = model.fit_length_head(source_ids.numpy(), [len(a.split()) for _, a in fit_examples],
                                 steps=settings["length_head_steps"],
                                 learning_rate=settings["length_head_learning_rate"],
                                 batch_size=settings["length_head_batch_size"], seed=seed)
    weights = {f"w{i}": w for i, w in enumerate(model.length_head.get_weights())}
    partial = path.with_suffix(".partial.npz")  # an interruption leaves no half-written file
    np.savez(partial, loss=np.float64(loss), **weights)
    partial.replace(path)
    return loss


def vocabularies(train_examples):
    """The source and target words of a run: those of its training examples, sorted."""
    return (vocabulary_words(c for c, _ in train_examples),
            vocabulary_words(a for _, a in train_examples))


def evaluate_run(run_dir, splits=None, verbose: int = 1, model=None) -> dict:
    """Exact-match accuracy (and, on the English-French set, BLEU) of a run's best model on
    `splits` (default `evaluated_splits` of its split); writes metrics and errors.
    `model`: the run's own model, which takes the best weights (`load_run_model`)."""
    run_dir = Path(run_dir)
    config = json.loads((run_dir / "config.json").read_text())
    splits = evaluated_splits(config["split"]) if splits is None else splits
    model = load_run_model(run_dir, into=model)
    translation = is_translation(config["split"])
    accuracy, bleu, started = {}, {}, time.perf_counter()
    for part in splits:
        split = encode_split(model, split_examples(config["split"], part, config["data"],
                                                   config["seed"]),
                             unknown_words="unk" if translation else "error")
        result = evaluate_split(model, split)
        accuracy[part] = result.accuracy
        if translation:
            bleu[part] = translation_scores(split.commands, split.actions, result.predictions)
            if part == "daxy":
                bleu[part]["translations"] = [
                    {"source": c, "expected": a, "predicted": p, "exact": bool(ok)}
                    for c, a, p, ok in zip(split.commands, split.actions, result.predictions,
                                           result.correct)]
        with open(run_dir / f"errors_{part}.jsonl", "w") as errors:
            for record in result.errors(split):
                errors.write(json.dumps(record) + "\n")
        if verbose:
            scores = (f", BLEU {bleu[part]['bleu']:.2f} (authors' way "
                      f"{bleu[part]['bleu_authors']:.2f})" if translation else "")
            print(f"{part:>10}: exact match {result.accuracy:.4f} "
                  f"({int(result.correct.sum())}/{len(split)}){scores}")
    metrics_file = run_dir / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    # Scores of splits not evaluated this time stay (`evaluate --splits validation` on a
    # finished run keeps its test score).
    accuracy = {**metrics.get("accuracy", {}), **accuracy}
    bleu = {**metrics.get("bleu", {}), **bleu}
    metrics.update({"model": config["model"], "split": config["split"], "seed": config["seed"],
                    "accuracy": accuracy, **({"bleu": bleu} if translation else {}),
                    "evaluation_time_s": round(time.perf_counter() - started, 1),
                    "versions": package_versions()})
    metrics_file.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics



class ScanExperiment(Experiment):
    """A SCAN model trained on a split (`config["split"]`) read through `tfds_scan`."""

    kind = "scan"
    task_key = "split"

    def scores_bleu(self, task):
        return is_translation(task)

    def model_arg_names(self, model, task):
        return registry.model_class(model).model_arguments()

    def build(self, config, seed=0):
        # As in `train_run`: the data first (building the TFDS dataset on first use draws
        # from the global random generators), then the seed, then the model.
        train = split_examples(config["split"], "train", config["data"], seed)
        source, target = vocabularies(train)
        keras.utils.set_random_seed(seed)
        return registry.build_model(config["model"], config["model_args"], source,
                                    target, train_commands=[c for c, _ in train])

    def check_model_args(self, config):
        # SCAN's whole vocabulary: a model that builds on it builds on any split's.
        registry.check_model_args(config["model"], config["model_args"])

    def train(self, config, run_dir, seed=0, verbose=1, command="", evaluate_splits=None,
              warm_start_from=None, model=None, strategy=None):
        return train_run(config, run_dir, seed=seed, verbose=verbose, command=command,
                         evaluate_splits=evaluate_splits, strategy=strategy,
                         warm_start_from=warm_start_from, model=model)

    def evaluate(self, run_dir, splits=None, verbose=1):
        return evaluate_run(run_dir, splits, verbose)

    def fit_examples(self, config):
        # Before a seed is chosen (an `--epochs` budget) a composition draw's size stands in
        # for all: the draws of seeds 0-4 differ by at most 15 of about 970 pairs.
        return len(split_examples(config["split"], "fit", config["data"],
                                  config.get("seed", 0)))


SCAN = ScanExperiment()
