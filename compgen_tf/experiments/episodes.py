"""Meta-training of `MetaSeq2Seq` on episodes (Lake 2019), one per step: `EPISODES`.

    python -m compgen_tf.train --model meta_seq2seq --task mutual_exclusivity --seed 0
    python -m compgen_tf reproduce --model meta_seq2seq --task mutual_exclusivity --seeds 3

Every hyperparameter comes from `configs/meta_seq2seq/<task>.json` (`--config`,
`--set SECTION.KEY=VALUE` and `--steps` override it). A run directory
(`runs/meta_seq2seq/<task>/seed<N>`) holds `config.json`, `checkpoints/`,
`best_model.keras` (best validation accuracy), `history.jsonl`, `metrics.json`
and `errors_test.jsonl`. Rerunning the same command resumes from the last
checkpoint: episode `i` of seed `s` is a pure function of `(task, s, i)`.

Validation episodes come from the training distribution (a seed stream of their
own); the test episodes are only read after training.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from compgen_tf import registry
from compgen_tf.experiments.config import ConfigError
from compgen_tf.experiments.experiment import (Experiment, account_warm_start,
                                               load_run_model, prepare_run_dir, start_from)
from compgen_tf.training.fit import META_TRAINING_DEFAULTS, fit_run
from compgen_tf.versions import package_versions
from compgen_tf.tokens import PAD_ID
from tfds_scan import episodes

MODEL_NAME = "meta_seq2seq"


def _pad_concat(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    width = max(a.shape[1], b.shape[1])
    return np.concatenate([np.pad(x, ((0, 0), (0, width - x.shape[1])), constant_values=PAD_ID)
                           for x in (a, b)], axis=0)


def episode_batch(model, episode, with_support_queries: bool):
    """(support ids, support action ids, query ids, target ids) for one training step.

    With `with_support_queries` the support items are appended to the queries (the
    paper's support loss).
    """
    support, actions, queries, targets = model.encode_episode_arrays(
        episode.support_commands, episode.support_actions, episode.query_commands,
        episode.query_actions)
    if with_support_queries:
        queries, targets = _pad_concat(queries, support), _pad_concat(targets, actions)
    return support, actions, queries, targets


def evaluate_episodes(model, episode_list, keep_errors: bool = False):
    """Exact-match accuracy over all queries of `episode_list` (and the wrong answers)."""
    correct = total = 0
    errors = []
    for index, episode in enumerate(episode_list):
        predicted = model.translate_episode(episode.support_commands, episode.support_actions,
                                            episode.query_commands)
        for command, target, output in zip(episode.query_commands, episode.query_actions,
                                           predicted):
            total += 1
            if output == target:
                correct += 1
            elif keep_errors:
                errors.append({"episode": index, "command": command, "target": target,
                               "output": output})
    return correct / max(total, 1), errors


class EpisodeBatches:
    """Meta-training's step-indexed batches: step s is training episode s of the seed.

    A batch is `episode_batch(model, episode, model.support_loss)`; episode i of seed s is a
    pure function of (task, s, i), so a resumed run reads what an uninterrupted one would.
    One episode per step, on one device (`replicable` is False).
    """

    ids = tf.TensorSpec([None, None], tf.int32)
    signature = (ids, ids, ids, ids)
    replicable = False

    def __init__(self, model, task: str, seed: int):
        self.model, self.task, self.seed = model, task, int(seed)

    def batch(self, step: int):
        """The batch of `step`: training episode `step` of the seed, as `episode_batch` makes
        it (with the support items among the queries when the model has `support_loss`)."""
        episode = episodes.training_episode(self.task, self.seed, int(step))
        return episode_batch(self.model, episode, self.model.support_loss)


def build_model(task: str, model_args: dict):
    """A `MetaSeq2Seq` with the vocabularies of `task` (`compgen_tf.registry.build_meta_model`)."""
    return registry.build_meta_model(task, model_args)


def train_meta_run(config: dict, run_dir, seed: int = 0, verbose: int = 1,
                   command: str = "", evaluate_splits=("validation", "test"),
                   warm_start_from=None, model=None) -> dict:
    """Meta-trains on `config["split"]` (the task), then scores `evaluate_splits` (see
    `Experiment.train`)."""
    run_dir = Path(run_dir)
    task = config["split"]
    prepare_run_dir(run_dir, dict(config, seed=seed))
    data = config.get("data", {})
    validation = episodes.validation_episodes(task, data.get("validation_episodes", 20),
                                              seed=data.get("validation_seed", 0))
    if model is None:
        keras.utils.set_random_seed(seed)
        model = build_model(task, config["model_args"])
    extend = start_from(warm_start_from, run_dir)
    summary = fit_run(model, config["training"], run_dir, EpisodeBatches(model, task, seed),
                      lambda m: evaluate_episodes(m, validation)[0], seed=seed,
                      verbose=verbose, defaults=META_TRAINING_DEFAULTS, schedule="once",
                      extend=extend)
    metrics = evaluate_run(run_dir, splits=evaluate_splits, verbose=verbose, model=model)
    account_warm_start(run_dir, summary, metrics)
    metrics.update(summary, command=command)
    (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def evaluate_run(run_dir, splits=("validation", "test"), verbose: int = 1,
                 model=None) -> dict:
    """Scores a run's best model on its episodes; updates `metrics.json` and `errors_<part>.jsonl`.
    `model`: the run's own model, which takes the best weights (`load_run_model`).

    "train" = the run's first 20 training episodes, "validation" = its validation
    episodes, "test" = the task's test episodes.
    """
    run_dir = Path(run_dir)
    config = json.loads((run_dir / "config.json").read_text())
    task, data = config["split"], config.get("data", {})
    model = load_run_model(run_dir, into=model)
    parts = {"train": lambda: [episodes.training_episode(task, config["seed"], i)
                               for i in range(20)],
             "validation": lambda: episodes.validation_episodes(
                 task, data.get("validation_episodes", 20), seed=data.get("validation_seed", 0)),
             "test": lambda: episodes.test_episodes(
                 task, support_sets=data.get("test_support_sets", 1))}
    metrics_file = run_dir / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    accuracy, started = dict(metrics.get("accuracy", {})), time.perf_counter()
    for part in splits:
        accuracy[part], errors = evaluate_episodes(model, parts[part](), keep_errors=True)
        with open(run_dir / f"errors_{part}.jsonl", "w") as handle:
            for record in errors:
                handle.write(json.dumps(record) + "\n")
        if verbose:
            print(f"{part:>10}: exact match {accuracy[part]:.4f}")
    metrics.update({"model": MODEL_NAME, "split": task, "seed": config["seed"],
                    "accuracy": accuracy,
                    "evaluation_time_s": round(time.perf_counter() - started, 1),
                    "versions": package_versions()})
    metrics_file.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def ablation_overrides(args) -> list[str]:
    """The `--set` overrides of the command-line ablation flags `--no-support-loss` and
    `--no-decoder-attention` (Lake 2019, Table 2)."""
    return ((["model_args.support_loss=false"] if args.no_support_loss else [])
            + (["model_args.decoder_attention=false"] if args.no_decoder_attention else []))


class EpisodesExperiment(Experiment):
    """Meta seq2seq trained on the episodes of a task (`config["split"]`), one per step."""

    kind = "episodes"
    task_key = "split"
    drops_once = True  # Lake 2019: the learning rate drops once, see training.fit

    def model_arg_names(self, model, task):
        from compgen_tf.models.meta_seq2seq import MetaSeq2Seq

        return MetaSeq2Seq.model_arguments()

    def new_model(self, config):
        return build_model(config["split"], config["model_args"])

    def check_data(self, config):
        try:
            episodes.check_test_support_sets(config["split"],
                                             config["data"].get("test_support_sets", 1))
        except ValueError as error:
            raise ConfigError(f"data.test_support_sets: {error}") from None

    def train(self, config, run_dir, seed=0, verbose=1, command="", evaluate_splits=None,
              warm_start_from=None, model=None):
        return train_meta_run(config, run_dir, seed=seed, verbose=verbose, command=command,
                              evaluate_splits=("validation", "test") if evaluate_splits is None
                              else evaluate_splits, warm_start_from=warm_start_from,
                              model=model)

    def evaluate(self, run_dir, splits=None, verbose=1):
        return evaluate_run(run_dir, ("validation", "test") if splits is None else splits,
                            verbose)

    def fit_examples(self, config):
        raise ConfigError(f"{MODEL_NAME} trains on episodes, one per step: give a number of "
                          f"steps (--steps), not of epochs")

    def steps_per_epoch(self, config):
        # Episodes are drawn afresh at every step: a tuning "epoch" is the stretch between
        # two validations.
        return int(config["training"].get("eval_every")
                   or META_TRAINING_DEFAULTS["eval_every"])

    def recorded_config(self, config):
        return {key: config[key] for key in ("model_args", "training", "data")}


EPISODES = EpisodesExperiment()
