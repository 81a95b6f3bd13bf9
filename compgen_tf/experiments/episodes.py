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

import keras
import numpy as np
import tensorflow as tf

from compgen_tf import registry
from compgen_tf.experiments.config import ConfigError
from compgen_tf.experiments.experiment import Experiment
from compgen_tf.models.meta_seq2seq.meta_seq2seq import MetaSeq2Seq
from compgen_tf.tokens import PAD_ID, pad_width
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
        # On JAX each new shape of a batch compiles the train step again (seconds to a
        # minute), and episodes come in dozens of widths: padded to multiples of 8, an
        # add-jump run's first 300 episodes have 14 shapes instead of 55. TensorFlow's
        # step takes every shape, and its batches stay as its committed runs had them.
        self.width_multiple = 8 if keras.backend.backend() == "jax" else 1

    def batch(self, step: int):
        """The batch of `step`: training episode `step` of the seed, as `episode_batch` makes
        it (with the support items among the queries when the model has `support_loss`),
        on JAX each array's width padded to a multiple of 8."""
        episode = episodes.training_episode(self.task, self.seed, int(step))
        return tuple(pad_width(ids, self.width_multiple)
                     for ids in episode_batch(self.model, episode, self.model.support_loss))


def ablation_overrides(args) -> list[str]:
    """The `--set` overrides of the command-line ablation flags `--no-support-loss` and
    `--no-decoder-attention` (Lake 2019, Table 2)."""
    return ((["model_args.support_loss=false"] if args.no_support_loss else [])
            + (["model_args.decoder_attention=false"] if args.no_decoder_attention else []))


class EpisodesExperiment(Experiment):
    """Meta seq2seq trained on the episodes of a task (`RunConfig.task`), one per step.

    Its data are the validation episodes (drawn from the training distribution, a seed
    stream of their own); a step's batch is training episode `step` of the seed
    (`EpisodeBatches`); the final scores are exact match over the queries of "train" (the
    run's first 20 training episodes), "validation" and "test" (the task's test episodes),
    each part's wrong answers in `errors_<part>.jsonl`.
    """

    kind = "episodes"
    task_key = "split"
    drops_once = True  # Lake 2019: the learning rate drops once, see TrainingConfig
    # Lake 2019's settings where they differ from the other trainers': clip 50, the rate
    # 1e-3 -> 1e-4 halfway, long patience.
    training_defaults = {"clip_norm": 50.0, "eval_every": 250, "patience": 1000,
                         "learning_rate_decay_factor": 0.1}

    def model_arg_names(self, model, task):
        return MetaSeq2Seq.model_arguments()

    def check_data(self, config):
        try:
            episodes.check_test_support_sets(config.task, config.data.test_support_sets)
        except ValueError as error:
            raise ConfigError(f"data.test_support_sets: {error}") from None

    def training_data(self, config, seed):
        return {"validation": self._episodes(config, "validation", seed)}

    def new_model(self, config, data):
        return registry.build_meta_model(config.task, config.model_args)

    def batches(self, model, config, data, seed):
        return EpisodeBatches(model, config.task, seed)

    def validation_score(self, model, config, data):
        return lambda m: evaluate_episodes(m, data["validation"])[0]

    def score(self, model, config, seed, parts, run_dir, verbose=1, data=None):
        accuracy = {}
        for part in parts:
            part_episodes = (data[part] if data is not None and part in data
                             else self._episodes(config, part, seed))
            accuracy[part], errors = evaluate_episodes(model, part_episodes, keep_errors=True)
            with open(run_dir / f"errors_{part}.jsonl", "w") as handle:
                for record in errors:
                    handle.write(json.dumps(record) + "\n")
            if verbose:
                print(f"{part:>10}: exact match {accuracy[part]:.4f}")
        return {"accuracy": accuracy}

    @staticmethod
    def _episodes(config, part: str, seed: int):
        """The episodes of `part`: "train" = the run's first 20 training episodes,
        "validation" = its validation episodes, "test" = the task's test episodes."""
        if part == "train":
            return [episodes.training_episode(config.task, seed, i) for i in range(20)]
        if part == "validation":
            return episodes.validation_episodes(config.task, config.data.validation_episodes,
                                                seed=config.data.validation_seed)
        if part == "test":
            return episodes.test_episodes(config.task,
                                          support_sets=config.data.test_support_sets)
        raise ValueError(f"{config.task} has the parts train, validation and test, not {part!r}")

    def fit_examples(self, config):
        raise ConfigError(f"{MODEL_NAME} trains on episodes, one per step: give a number of "
                          f"steps (--steps), not of epochs")

    def steps_per_epoch(self, config):
        # Episodes are drawn afresh at every step: a tuning "epoch" is the stretch between
        # two validations.
        return config.training.eval_every

    def recorded_config(self, record):
        return {key: record[key] for key in ("model_args", "training", "data")}


EPISODES = EpisodesExperiment()
