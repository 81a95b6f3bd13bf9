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

The baseline and Syntactic Attention also train on COGS (`--split cogs`): sentences to
logical forms, validated on the official dev set and scored on train, validation (= dev),
test and gen; as on the English-French set an unseen word is `<unk>`. Its train part is
scored on every `COGS_TRAIN_SCORED_EVERY`-th line (3,020 of 24,155), for decoding cost
only: greedy decoding of logical forms up to 481 tokens is most of a COGS run's scoring
time. A part whose lines have categories (COGS) is also scored per category and per group
of categories (COGS: lexical, structural), in `metrics.json` under `accuracy_by_category`
(`compgen_tf.training.categories`), and each error record names its category.

It also trains the baseline and Syntactic Attention on a data folder of the user's
(`--split path/to/folder`, `tfds_scan.folder_pairs`: `train.tsv` and any of `dev.tsv`,
`test.tsv`, `gen.tsv`). Such a run is configured from the model's default configuration
with no grammar check (`command_grammar` null), and its `max_input_length` and
`max_output_length` are at least what the folder's files need (its longest source; its
longest target and `<eos>`): a configuration's larger value stays. Its `config.json` records
the folder's absolute path as the split and the SHA-256 of its files as
`data.folder_sha256`, checked whenever the run is read back. Validation is `dev.tsv` when
there is one (and "fit" all of train), else a carve of train as for SCAN; the run is scored
on train, validation and each of test and gen that the folder has. As on the
English-French set, a word that training never saw becomes `<unk>` (its row is scored, and
counts as wrong when its target has such a word), instead of an error that would end the run
after training; the run directory is named after the folder (`runs/<model>/<folder name>/`).

The baseline also trains on the composition task of "Symmetry and systematicity"
(`--model seq2seq --split composition`): the standard LSTM encoder-decoder of the SCAN
papers beside that paper's baselines. Its pairs are those of the toy task, drawn with the
run's seed, so seed N sees the data of the toy models' seed N.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import tensorflow as tf

import tfds_scan
from compgen_tf import registry
from compgen_tf.errors import ConfigError
from compgen_tf.experiments.toy import TOY_PAIR_SPLITS, composition_pairs
from compgen_tf.experiments.experiment import Experiment
from compgen_tf.experiments.run_config import as_data_config
from compgen_tf.models.preprocessor import vocabulary_words
from compgen_tf.training.batches import SplitBatches
from compgen_tf.training.bleu import translation_scores
from compgen_tf.training.categories import category_scores
from compgen_tf.training.data import encode_split
from compgen_tf.training.evaluation import evaluate_split
from compgen_tf.training.fit import as_training_config, split_validation

EVALUATED_SPLITS = ("train", "validation", "test")
MT_EVALUATED_SPLITS = EVALUATED_SPLITS + ("daxy",)
COGS_EVALUATED_SPLITS = EVALUATED_SPLITS + ("gen",)
# COGS's train part is scored on every 8th line (3,020 lines, in file order): for cost only.
COGS_TRAIN_SCORED_EVERY = 8


def is_translation(split: str) -> bool:
    """Whether `split` names a config of the English-French set rather than of SCAN."""
    return split in tfds_scan.MT_CONFIG_NAMES


def is_data_folder(split: str) -> bool:
    """Whether `split` names a data folder of the user's (`tfds_scan.folder_pairs.is_folder`)
    rather than a built-in split."""
    return split not in TOY_PAIR_SPLITS and tfds_scan.folder_pairs.is_folder(split)


def folder_test_parts(split: str) -> tuple:
    """The test parts of a data folder: each of "test" and "gen" that it has a file of."""
    present = tfds_scan.folder_pairs.split_files(split)
    return tuple(part for part in ("test", "gen") if part in present)


def is_cogs(split: str) -> bool:
    """Whether `split` names a COGS config (`tfds_scan.COGS_CONFIG_NAMES`)."""
    return split in tfds_scan.COGS_CONFIG_NAMES


def evaluated_splits(split: str) -> tuple:
    """The parts a run on `split` is scored on by default: train, validation and test, and
    daxy on an English-French split, gen on COGS, and on a data folder each of test and gen
    that it has (`--evaluate-splits` chooses among them)."""
    if is_cogs(split):
        return COGS_EVALUATED_SPLITS
    if is_data_folder(split):
        return ("train", "validation") + folder_test_parts(split)
    return MT_EVALUATED_SPLITS if is_translation(split) else EVALUATED_SPLITS


def unknown_words(split: str) -> str:
    """How a run on `split` encodes a word outside its vocabulary (`encode_split`): as
    `<unk>` on natural text (the English-French set; COGS, whose dev/test/gen have a few
    such words) and on a data folder, whose held-out files may hold words that train does
    not; an error on SCAN, where one is a bug."""
    return ("unk" if is_translation(split) or is_cogs(split) or is_data_folder(split)
            else "error")


def folder_run_config(run, origin: str):
    """`run` (a `RunConfig` on a data folder) as a folder run is configured: no grammar
    check unless the configuration names one, `max_input_length` / `max_output_length` at
    least what the folder's files need, and `data.folder_sha256` the SHA-256 of its files.

    Raises:
        ConfigError: when the configuration records another `folder_sha256` (the folder
            changed since).
        tfds_scan.FolderDataError: for a bad folder or file.
    """
    sha256 = tfds_scan.folder_pairs.content_sha256(run.task)
    recorded = run.given["data"].get("folder_sha256")
    if recorded is not None and recorded != sha256:
        raise ConfigError(f"{origin}: data folder {run.task} has changed since this "
                          f"configuration was recorded (data.folder_sha256 {recorded}, its "
                          f"files' now {sha256})")
    pairs = [pair for part in tfds_scan.folder_pairs.split_files(run.task)
             for pair in tfds_scan.load_pairs(run.task, part)]
    args = {"command_grammar": None, **run.model_args}
    for key, needed in (("max_input_length", max(len(s.split()) for s, _ in pairs)),
                        ("max_output_length", max(len(t.split()) for _, t in pairs) + 1)):
        args[key] = max(int(args.get(key) or 0), needed)
    return dataclasses.replace(
        run, model_args=args, data=dataclasses.replace(run.data, folder_sha256=sha256),
        given={**run.given, "data": {**run.given["data"], "folder_sha256": sha256}})


def split_examples(split: str, part: str, data=None, seed: int = 0):
    """Examples of `part` ("fit", "train", "validation" or "test") of a SCAN split, read
    through the repository's TFDS builder (`tfds_scan.load`, built offline on first use).
    `data`: a `DataConfig` (or a mapping of its keys); `seed`: the draw of a toy split
    (`TOY_PAIR_SPLITS`); a SCAN split has one."""
    data = as_data_config(data)
    if split in TOY_PAIR_SPLITS:
        if data.validation_carve != "random":
            raise ValueError(f"the {split} split carves its validation pairs at random; "
                             f"data.validation_carve {data.validation_carve!r} does not apply")
        return composition_pairs(seed, data)[part]
    return tfds_scan.load_pairs(split, part, validation_fraction=data.validation_fraction,
                                validation_seed=data.validation_seed,
                                validation_carve=data.validation_carve)


def split_categories(split: str, part: str, data=None):
    """The category of each example of `split_examples(split, part, data)`, or None when the
    split has none (SCAN, the English-French set, the toy splits)."""
    if split in TOY_PAIR_SPLITS:
        return None
    data = as_data_config(data)
    return tfds_scan.load_categories(split, part, validation_fraction=data.validation_fraction,
                                     validation_seed=data.validation_seed,
                                     validation_carve=data.validation_carve)


def category_group_of(split: str):
    """The function that pools `split`'s categories into groups (COGS: lexical, structural,
    in_distribution; `tfds_scan.cogs.category_group`), or None."""
    return tfds_scan.cogs.category_group if is_cogs(split) else None


LENGTH_HEAD_WEIGHTS = "length_head.npz"


def prepare_length_head(model, fit_examples, run_dir, training, seed):
    """Fits `model`'s length head on the commands and output lengths of `fit_examples`
    before the decoder trains (`Seq2SeqModel.fit_length_head`, settings `length_head_*` of
    the `TrainingConfig` `training`),
    and freezes it. The fitted weights are kept in `run_dir/length_head.npz`: a resumed run
    loads them instead of fitting again. Returns the head's mean squared error on them."""
    path = Path(run_dir) / LENGTH_HEAD_WEIGHTS
    if path.exists():
        with np.load(path) as saved:
            model.length_head.set_weights([saved[f"w{i}"] for i in range(len(saved.files) - 1)])
            model.length_head.trainable = False
            return float(saved["loss"])
    training = as_training_config(training)
    source_ids, _ = model.encode_commands(tf.constant([c for c, _ in fit_examples]))
    loss = model.fit_length_head(source_ids.numpy(), [len(a.split()) for _, a in fit_examples],
                                 steps=training.length_head_steps,
                                 learning_rate=training.length_head_learning_rate,
                                 batch_size=training.length_head_batch_size, seed=seed)
    weights = {f"w{i}": w for i, w in enumerate(model.length_head.get_weights())}
    partial = path.with_suffix(".partial.npz")  # an interruption leaves no half-written file
    np.savez(partial, loss=np.float64(loss), **weights)
    partial.replace(path)
    return loss


def vocabularies(train_examples):
    """The source and target words of a run: those of its training examples, sorted."""
    return (vocabulary_words(c for c, _ in train_examples),
            vocabulary_words(a for _, a in train_examples))


class ScanExperiment(Experiment):
    """A SCAN model trained on a split (`RunConfig.task`) read through `tfds_scan`.

    Its data are the split's examples (`split_examples`: "train", and the "fit" and
    "validation" parts carved from it), its vocabularies those of "train"; model selection
    reads the exact match (or corpus BLEU) of "validation"; the final scores are exact match
    and, on the English-French set, BLEU both ways, each part's errors in
    `errors_<part>.jsonl`.
    """

    kind = "scan"
    task_key = "split"

    def scores_bleu(self, task):
        return is_translation(task)

    def is_data_folder(self, task):
        return is_data_folder(task)

    def run_name(self, task):
        if is_data_folder(task):
            return Path(task).resolve().name or "data"
        return task

    def check_task(self, model, task):
        if not is_data_folder(task):
            return super().check_task(model, task)
        if model not in registry.FOLDER_MODELS:
            raise ConfigError(f"model {model!r} trains on SCAN's words only, not on a data "
                              f"folder ({task}); those that do: "
                              f"{', '.join(registry.FOLDER_MODELS)}")

    def run_config(self, config, origin="configuration"):
        if isinstance(config, dict) and is_data_folder(config.get(self.task_key)):
            # The folder's absolute path: the record names it wherever a command runs.
            task = os.fspath(Path(config[self.task_key]).resolve())
            run = super().run_config({**config, self.task_key: task}, origin)
            return folder_run_config(run, origin)
        return super().run_config(config, origin)

    def test_parts(self, config):
        if is_data_folder(config.task):
            return folder_test_parts(config.task)
        return super().test_parts(config)

    def model_arg_names(self, model, task):
        return registry.model_class(model).model_arguments()

    def training_data(self, config, seed):
        return {part: split_examples(config.task, part, config.data, seed)
                for part in ("train", "fit", "validation")}

    def new_model(self, config, data):
        source, target = vocabularies(data["train"])
        return registry.build_model(config.model, config.model_args, source, target,
                                    train_commands=[c for c, _ in data["train"]])

    def check_model_values(self, config):
        # On SCAN's whole vocabulary: a model that builds on it builds on any split's.
        registry.check_model_values(config.model, config.model_args)

    def prepare(self, model, config, data, run_dir, seed, strategy):
        source, target = vocabularies(data["train"])
        for side, words in (("source", source), ("target", target)):
            (run_dir / f"{side}_vocabulary.json").write_text(
                json.dumps({"name": side, "words": words}, indent=1) + "\n")
        data["encoded"] = {part: encode_split(model, data[part],
                                              unknown_words=unknown_words(config.task))
                           for part in ("fit", "validation")}
        if getattr(model, "length_head_args", None) is None:
            return {}
        with strategy.scope():
            return {"length_head_fit_loss": prepare_length_head(
                model, data["fit"], run_dir, config.training, seed)}

    def batches(self, model, config, data, seed):
        return SplitBatches(data["encoded"]["fit"], config.training.batch_size, seed,
                            config.data.length_bucket)

    def validation_score(self, model, config, data):
        return split_validation(data["encoded"]["validation"], config.training.selection)

    def evaluated_parts(self, config):
        return evaluated_splits(config.task)

    def rescored_parts(self, config):
        # Every part the split has, as at the end of training: daxy on the English-French
        # set, gen on COGS, only the files a data folder has.
        return self.evaluated_parts(config)

    def score(self, model, config, seed, parts, run_dir, verbose=1, data=None):
        translation = is_translation(config.task)
        accuracy, bleu, by_category = {}, {}, {}
        for part in parts:
            examples = (data[part] if data is not None and part in data else
                        split_examples(config.task, part, config.data, seed))
            categories = split_categories(config.task, part, config.data)
            if is_cogs(config.task) and part == "train":
                examples = examples[::COGS_TRAIN_SCORED_EVERY]
                categories = categories[::COGS_TRAIN_SCORED_EVERY]
            split = encode_split(model, examples, unknown_words=unknown_words(config.task))
            result = evaluate_split(model, split)
            accuracy[part] = result.accuracy
            if categories is not None:
                by_category[part] = category_scores(result.correct, categories,
                                                    category_group_of(config.task))
            if translation:
                bleu[part] = translation_scores(split.commands, split.actions,
                                                result.predictions)
                if part == "daxy":
                    bleu[part]["translations"] = [
                        {"source": c, "expected": a, "predicted": p, "exact": bool(ok)}
                        for c, a, p, ok in zip(split.commands, split.actions,
                                               result.predictions, result.correct)]
            with open(run_dir / f"errors_{part}.jsonl", "w") as errors:
                for record in result.errors(split, categories):
                    errors.write(json.dumps(record) + "\n")
            if verbose:
                scores = (f", BLEU {bleu[part]['bleu']:.2f} (authors' way "
                          f"{bleu[part]['bleu_authors']:.2f})" if translation else "")
                scores += "".join(f", {group} {tally['accuracy']:.4f}" for group, tally in
                                  by_category.get(part, {}).get("groups", {}).items())
                print(f"{part:>10}: exact match {result.accuracy:.4f} "
                      f"({int(result.correct.sum())}/{len(split)}){scores}")
        return {"accuracy": accuracy, **({"bleu": bleu} if translation else {}),
                **({"accuracy_by_category": by_category} if by_category else {})}

    def fit_examples(self, config):
        # Before a seed is chosen (an `--epochs` budget) a composition draw's size stands in
        # for all: the draws of seeds 0-4 differ by at most 15 of about 970 pairs.
        return len(split_examples(config.task, "fit", config.data, 0))


SCAN = ScanExperiment()
