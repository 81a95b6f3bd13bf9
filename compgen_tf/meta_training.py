"""Meta-training of `MetaSeq2Seq` on episodes (Lake 2019): one episode per step.

    python -m compgen_tf.train --model meta_seq2seq --task mutual_exclusivity --seed 0
    python -m compgen_tf.meta_training --task mutual_exclusivity --seeds 3   # + results file

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

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from compgen_tf.config import (ConfigError, apply_overrides, check_learning_rate_schedule,
                               config_path, load_config)
from compgen_tf.results import (RESULTS_DIR, earlier_results, run_record, without_options,
                                write_results)
from compgen_tf.training.fit import META_TRAINING_DEFAULTS, fit_run
from compgen_tf.versions import package_versions
from compgen_tf.vocabulary import PAD_ID
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
        episode = episodes.training_episode(self.task, self.seed, int(step))
        return episode_batch(self.model, episode, self.model.support_loss)


def build_model(task: str, model_args: dict):
    """A `MetaSeq2Seq` with the vocabularies of `task`."""
    from compgen_tf.models.meta_seq2seq import MetaSeq2Seq

    words, actions = episodes.vocabularies(task)
    try:
        return MetaSeq2Seq(words, actions, **model_args)
    except TypeError as error:
        raise ValueError(f"bad model_args for {MODEL_NAME!r}: {error}") from error


def train_meta_run(config: dict, run_dir, seed: int = 0, verbose: int = 1,
                   command: str = "") -> dict:
    """Meta-trains on `config["split"]` (the task), then scores the test episodes."""
    from compgen_tf.runs import prepare_run_dir

    run_dir = Path(run_dir)
    task = config["split"]
    prepare_run_dir(run_dir, dict(config, seed=seed))
    keras.utils.set_random_seed(seed)
    data = config.get("data", {})
    validation = episodes.validation_episodes(task, data.get("validation_episodes", 20),
                                              seed=data.get("validation_seed", 0))
    model = build_model(task, config["model_args"])
    summary = fit_run(model, config["training"], run_dir, EpisodeBatches(model, task, seed),
                      lambda m: evaluate_episodes(m, validation)[0], seed=seed,
                      verbose=verbose, defaults=META_TRAINING_DEFAULTS, schedule="once")
    metrics = evaluate_run(run_dir, verbose=verbose)
    metrics.update(summary, command=command)
    (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def evaluate_run(run_dir, splits=("validation", "test"), verbose: int = 1) -> dict:
    """Scores a run's best model on its episodes; updates `metrics.json` and `errors_<part>.jsonl`.

    "train" = the run's first 20 training episodes, "validation" = its validation
    episodes, "test" = the task's test episodes.
    """
    from compgen_tf.runs import load_run_model

    run_dir = Path(run_dir)
    config = json.loads((run_dir / "config.json").read_text())
    task, data = config["split"], config.get("data", {})
    model = load_run_model(run_dir)
    parts = {"train": lambda: [episodes.training_episode(task, config["seed"], i)
                               for i in range(20)],
             "validation": lambda: episodes.validation_episodes(
                 task, data.get("validation_episodes", 20), seed=data.get("validation_seed", 0)),
             "test": lambda: episodes.test_episodes(task)}
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


def resolve_config(task: str, config_file=None, overrides=(), steps=None,
                   no_support_loss=False, no_decoder_attention=False) -> dict:
    episodes.check_task(task)
    config = load_config(config_file or config_path(MODEL_NAME, task))
    overrides = list(overrides)
    if no_support_loss:
        overrides.append("model_args.support_loss=false")
    if no_decoder_attention:
        overrides.append("model_args.decoder_attention=false")
    if steps is not None:
        overrides.append(f"training.max_steps={steps}")
    config = apply_overrides(config, overrides)
    config.update(model=MODEL_NAME, split=task)
    check_learning_rate_schedule(config["training"], drops_once=True)
    # Built once here so that bad model_args are refused before a run directory is written.
    build_model(task, config["model_args"])
    return config



def train_from_cli(args, command: str) -> int:
    """`python -m compgen_tf.train --model meta_seq2seq --task TASK` (see `compgen_tf.train`)."""
    if args.task is None:
        print(f"error: --model {MODEL_NAME} needs --task, one of: "
              f"{', '.join(episodes.TASK_NAMES)}", file=sys.stderr)
        return 2
    if args.split is not None or args.epochs is not None:
        print(f"error: --model {MODEL_NAME} trains on episodes: use --task and --steps, "
              "not --split or --epochs", file=sys.stderr)
        return 2
    try:
        config = resolve_config(args.task, args.config, args.set, args.steps,
                                args.no_support_loss, args.no_decoder_attention)
    except (ConfigError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from compgen_tf.runs import default_run_dir

    run_dir = args.output or default_run_dir(MODEL_NAME, args.task, args.seed)
    metrics = train_meta_run(config, run_dir, seed=args.seed, verbose=0 if args.quiet else 1,
                             command=command)
    accuracy = metrics["accuracy"]
    print(f"run {run_dir}: test exact match {accuracy['test']:.4f} "
          f"(validation {accuracy['validation']:.4f}, {metrics['steps']} steps, "
          f"{metrics['wall_time_s']} s)")
    return 0


def _recorded_config(config: dict) -> dict:
    return {key: config[key] for key in ("model_args", "training", "data")}


def main(argv=None) -> int:
    """Trains seeds first..first+N-1 of a task one after another and writes the results file."""
    parser = argparse.ArgumentParser(prog="python -m compgen_tf.meta_training",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", required=True, choices=episodes.TASK_NAMES)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--config")
    parser.add_argument("--name", help="results file name (default: the task)")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE")
    parser.add_argument("--runs-dir", default="runs")
    parser.add_argument("--results-dir", default=str(RESULTS_DIR))
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--no-support-loss", action="store_true", help="ablation")
    parser.add_argument("--no-decoder-attention", action="store_true", help="ablation")
    args = parser.parse_args(argv)
    command = "python -m compgen_tf.meta_training " + shlex.join(without_options(
        sys.argv[1:] if argv is None else list(argv), ("--runs-dir", "--results-dir")))
    name = args.name or args.task
    try:
        config = resolve_config(args.task, args.config, args.set, args.steps,
                                args.no_support_loss, args.no_decoder_attention)
        # A results file of another configuration is refused now, not after hours of training.
        earlier_results(Path(args.results_dir) / MODEL_NAME / f"{name}.json", args.task,
                        _recorded_config(config))
    except (ConfigError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from compgen_tf.runs import prepare_run_dir

    runs = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        run_dir = Path(args.runs_dir) / MODEL_NAME / name / f"seed{seed}"
        metrics_file = run_dir / "metrics.json"
        if metrics_file.exists() and "wall_time_s" in json.loads(metrics_file.read_text()):
            try:  # reused only when it ran the configuration being recorded
                prepare_run_dir(run_dir, dict(config, seed=seed))
            except ValueError as error:
                print(f"error: {error}", file=sys.stderr)
                return 2
            metrics = json.loads(metrics_file.read_text())
        else:
            metrics = train_meta_run(config, run_dir, seed=seed,
                                     verbose=0 if args.quiet else 1, command=command)
        print(f"seed {seed}: test {metrics['accuracy']['test']:.4f} "
              f"(validation {metrics['accuracy']['validation']:.4f}, {metrics['steps']} steps, "
              f"{metrics['wall_time_s']} s)", flush=True)
        runs.append(run_record(metrics, run_dir))
    path = write_results(MODEL_NAME, args.task, command, runs, package_versions(), name=name,
                         results_dir=Path(args.results_dir), config=_recorded_config(config))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
