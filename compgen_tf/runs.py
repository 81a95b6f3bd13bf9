"""Run directories: what one training run leaves behind, and how to (re)evaluate it.

A run directory holds `config.json` (the resolved configuration),
`source_vocabulary.json` / `target_vocabulary.json`, `checkpoints/`,
`best_model.keras`, `history.jsonl`, `logs/` (TensorBoard), `metrics.json`, and
`errors_<split>.jsonl` (the wrongly translated examples of each split).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import keras
import tensorflow as tf

import tfds_scan
from compgen_tf import registry
from compgen_tf.config import comparable, config_differences
from compgen_tf.data import encode_split
from compgen_tf.distribute import is_chief, wait_for_workers, worker_index
from compgen_tf.evaluation import evaluate_split
from compgen_tf.training.callbacks import BEST_MODEL
from compgen_tf.training.fit import fit_split
from compgen_tf.versions import package_versions
from compgen_tf.vocabulary import Vocabulary

EVALUATED_SPLITS = ("train", "validation", "test")


def default_run_dir(model: str, split: str, seed: int) -> Path:
    return Path("runs") / model / split / f"seed{seed}"


def split_examples(split: str, part: str, data: dict):
    """Examples of `part` ("fit", "train", "validation" or "test") of a SCAN split, read
    through the repository's TFDS builder (`tfds_scan.load`, built offline on first use)."""
    return tfds_scan.load_pairs(split, part,
                                validation_fraction=data.get("validation_fraction", 0.1),
                                validation_seed=data.get("validation_seed", 0),
                                validation_carve=data.get("validation_carve", "random"))


def prepare_run_dir(run_dir, resolved: dict) -> None:
    """Creates `run_dir` with `config.json`; refuses a directory holding another configuration."""
    run_dir = Path(run_dir)
    config_file = run_dir / "config.json"
    if config_file.exists():
        previous = json.loads(config_file.read_text())
        if comparable(previous) != comparable(resolved):
            raise ValueError(f"{run_dir} holds a run with a different configuration; pass "
                             f"another --output or delete it (differences: "
                             f"{config_differences(comparable(previous), comparable(resolved))})")
        return  # the same run: config.json keeps the notes it was started with
    run_dir.mkdir(parents=True, exist_ok=True)
    config_file.write_text(json.dumps(resolved, indent=2) + "\n")


def train_run(config: dict, run_dir, seed: int = 0, verbose: int = 1, command: str = "",
              evaluate_splits=EVALUATED_SPLITS, strategy=None,
              warm_start_from=None) -> dict | None:
    """Trains `config["model"]` on `config["split"]`, then evaluates it; returns the metrics.

    Re-running with the same run directory resumes; a finished run is only re-evaluated.
    `warm_start_from`: a run directory of the same model and seed (a Hyperband trial's
    parent) whose last checkpoint this run continues from, up to its own `max_steps`;
    recorded in the metrics as `warm_start` (used only when `run_dir` has no checkpoint yet).
    `evaluate_splits` names the splits scored after training (tuning leaves out "test").
    `strategy` is a `tf.distribute` strategy (`compgen_tf.distribute.make_strategy`). Under
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
    examples = {part: split_examples(config["split"], part, data)
                for part in ("train", "fit", "validation")}
    source = Vocabulary.from_texts((c for c, _ in examples["train"]), name="source")
    target = Vocabulary.from_texts((a for _, a in examples["train"]), name="target")
    source.save(run_dir / "source_vocabulary.json")
    target.save(run_dir / "target_vocabulary.json")
    # Seeded right before the model is built: building the TFDS dataset on first use draws
    # from the global random generators, and the initial weights must not depend on whether
    # this process built it.
    keras.utils.set_random_seed(seed)
    with strategy.scope():
        model = registry.build_model(config["model"], config["model_args"], source.words,
                                     target.words)
    fit = encode_split(model, examples["fit"])
    validation = encode_split(model, examples["validation"])
    extend = warm_start_from is not None and not (run_dir / "checkpoints").exists()
    if extend:
        copy_checkpoint(warm_start_from, run_dir)
    summary = fit_split(model, config["training"], run_dir, fit, validation, seed=seed,
                        length_bucket=data.get("length_bucket", 8), strategy=strategy,
                        verbose=verbose, extend=extend)
    warm_start_file = run_dir / WARM_START
    warm_start = json.loads(warm_start_file.read_text()) if warm_start_file.exists() else None
    if warm_start is not None:
        # This run's own training time, without the parent's that its checkpoint carried.
        summary["wall_time_s"] = round(summary["wall_time_s"] - warm_start["wall_time_s"], 1)
    if run_dir != chief_dir:
        shutil.rmtree(run_dir)
        wait_for_workers(strategy)
        return None
    metrics = evaluate_run(run_dir, splits=evaluate_splits, verbose=verbose)
    metrics.update(summary, command=command)
    if warm_start is not None:
        metrics["warm_start"] = warm_start
    (run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
    wait_for_workers(strategy)
    return metrics


WARM_START = "warm_start.json"


def copy_checkpoint(source_run, run_dir) -> dict:
    """Copies a finished run's checkpoints, best model and history into `run_dir`, so that a
    longer run continues from there. Writes and returns `run_dir/warm_start.json`:
    {"from": source_run, "step": the checkpoint's step, "wall_time_s": its training time}."""
    source_run, run_dir = Path(source_run), Path(run_dir)
    shutil.copytree(source_run / "checkpoints", run_dir / "checkpoints")
    for name in (BEST_MODEL, "history.jsonl"):
        if (source_run / name).exists():
            shutil.copy2(source_run / name, run_dir / name)
    latest = tf.train.latest_checkpoint(str(run_dir / "checkpoints"))
    metrics_file = source_run / "metrics.json"
    parent_time = (json.loads(metrics_file.read_text()).get("wall_time_s", 0.0)
                   if metrics_file.exists() else 0.0)
    record = {"from": str(source_run), "step": int(latest.rsplit("-", 1)[1]),
              "wall_time_s": parent_time}
    (run_dir / WARM_START).write_text(json.dumps(record) + "\n")
    return record


def load_run_model(run_dir):
    """The best model of a run directory."""
    path = Path(run_dir) / BEST_MODEL
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: is {run_dir} a finished training run?")
    import compgen_tf.models  # noqa: F401  (registers the model classes for deserialization)
    return keras.saving.load_model(path)


def evaluate_run(run_dir, splits=EVALUATED_SPLITS, verbose: int = 1) -> dict:
    """Exact-match accuracy of a run's best model on its splits; writes metrics and errors."""
    run_dir = Path(run_dir)
    config = json.loads((run_dir / "config.json").read_text())
    model = load_run_model(run_dir)
    accuracy, started = {}, time.perf_counter()
    for part in splits:
        split = encode_split(model, split_examples(config["split"], part, config["data"]))
        result = evaluate_split(model, split)
        accuracy[part] = result.accuracy
        with open(run_dir / f"errors_{part}.jsonl", "w") as errors:
            for record in result.errors(split):
                errors.write(json.dumps(record) + "\n")
        if verbose:
            print(f"{part:>10}: exact match {result.accuracy:.4f} "
                  f"({int(result.correct.sum())}/{len(split)})")
    metrics_file = run_dir / "metrics.json"
    metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    metrics.update({"model": config["model"], "split": config["split"], "seed": config["seed"],
                    "accuracy": accuracy, "evaluation_time_s": round(time.perf_counter() - started, 1),
                    "versions": package_versions()})
    metrics_file.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics

