"""Training runs on the toy tasks of "Symmetry and systematicity", through `compgen_tf.train`.

`python -m compgen_tf.train --model MODEL --task TASK [--seed N]` trains one run into
`runs/MODEL/TASK/seedN` (`config.json`, `best_model.keras`, `history.jsonl`,
`metrics.json`); the hyperparameters come from `configs/MODEL/TASK.json`.

| model | tasks | what |
|---|---|---|
| `symbol_convolution` | `rule_learning`, `composition` | width-1 convolutions over symbols |
| `mlp_baseline` | `rule_learning`, `composition` | multi-layer perceptron |
| `recurrent_baseline` | `rule_learning`, `composition` | recurrent net / encoder-decoder |
| `stack_lstm` | `palindromes`, `palindromes_depth` | LSTM with `StackLSTMCell` memory |
| `lstm_baseline` | `palindromes`, `palindromes_depth` | standard LSTM, 100 units |

`palindromes` trains on strings of lengths 15-25 and is tested on unseen strings
of those lengths (`test`, the paper's in-domain test) and on lengths 29-37
(`long`); `palindromes_depth` trains without strings of more than 4 `a`s and is
tested on strings with more (`depth_test`). Validation sets are carved from the
training data and select the saved model; test sets are scored once, at the end.

A run interrupted mid-training resumes exactly from `checkpoints/` when the same command
is run again; a finished run (its `metrics.json` written) is not trained again.

`python -m compgen_tf.toy_runs --model MODEL --task TASK --seeds 5` trains the
missing seeds and writes `results/MODEL/<name>.json` (`compgen_tf.results`).
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import keras
import numpy as np

from compgen_tf.config import (ConfigError, apply_overrides, check_learning_rate_schedule,
                               config_path, load_config)
from compgen_tf.runs import prepare_run_dir
from compgen_tf.training.batches import ArrayBatches
from compgen_tf.training.callbacks import BEST_MODEL
from compgen_tf.training.fit import TOY_TRAINING_DEFAULTS, fit_run, training_settings
from compgen_tf.versions import package_versions

MODEL_TASKS = {
    "symbol_convolution": ("rule_learning", "composition"),
    "mlp_baseline": ("rule_learning", "composition"),
    "recurrent_baseline": ("rule_learning", "composition"),
    "stack_lstm": ("palindromes", "palindromes_depth"),
    "lstm_baseline": ("palindromes", "palindromes_depth"),
}
ARCHITECTURE = {"symbol_convolution": "convolution", "mlp_baseline": "mlp",
                "recurrent_baseline": "recurrent", "stack_lstm": "stack", "lstm_baseline": "lstm"}
# Test splits of each task, and the results file each one is reported in.
TEST_SPLITS = {"rule_learning": {"test": "rule_learning"},
               "composition": {"test": "composition"},
               "palindromes": {"test": "palindromes_in_domain", "long": "palindromes_long"},
               "palindromes_depth": {"depth_test": "palindromes_deep"}}


# ------------------------------------------------------------------------- data

def _carve(items, fraction: float, seed: int, validation_seed: int):
    """(fit, validation): a `fraction` of `items` drawn by (validation_seed, seed)."""
    order = np.random.default_rng([validation_seed, seed]).permutation(len(items))
    count = max(1, round(fraction * len(items)))
    return [items[i] for i in order[count:]], [items[i] for i in order[:count]]


def composition_arrays(pairs):
    """(source ids (n, 2), target ids (n, 11), None): targets are action ids, then padding (10)."""
    from tfds_scan import toy_tasks

    words = toy_tasks.COMMANDS + toy_tasks.MODIFIERS
    actions = tuple(c.upper() for c in toy_tasks.COMMANDS)
    pad = len(actions)
    source = np.array([[words.index(w) for w in command.split()] for command, _ in pairs],
                      np.int32)
    target = np.full((len(pairs), len(toy_tasks.MODIFIERS) + 1), pad, np.int32)
    for i, (_, output) in enumerate(pairs):
        target[i, :len(output.split())] = [actions.index(a) for a in output.split()]
    return source, target, None


def task_data(task: str, seed: int, data: dict) -> dict:
    """{"fit", "validation", <test splits>}: (inputs, targets, sample weights or None)."""
    from compgen_tf.models.palindromes import palindrome_arrays
    from tfds_scan import toy_tasks

    fraction = data.get("validation_fraction", 0.1)
    validation_seed = data.get("validation_seed", 0)
    if task == "rule_learning":
        def encode(part):
            return (toy_tasks.rule_learning_array([s for s, _ in part]),
                    np.array([label for _, label in part], np.int32), None)
        splits = toy_tasks.rule_learning()
        fit, validation = _carve(splits["train"], fraction, seed, validation_seed)
        return {"fit": encode(fit), "validation": encode(validation),
                "test": encode(splits["test"])}
    if task == "composition":
        splits = toy_tasks.composition(seed)
        fit, validation = _carve(splits["train"], fraction, seed, validation_seed)
        return {"fit": composition_arrays(fit), "validation": composition_arrays(validation),
                "test": composition_arrays(splits["test"])}
    if task in ("palindromes", "palindromes_depth"):
        splits = toy_tasks.palindromes(seed, train_size=data.get("train_size", 100_000),
                                       test_size=data.get("test_size", 1_000))
        train = splits["train" if task == "palindromes" else "depth_train"]
        fit, validation = _carve(train, fraction, seed, validation_seed)
        out = {"fit": palindrome_arrays(fit), "validation": palindrome_arrays(validation)}
        out.update({name: palindrome_arrays(splits[name]) for name in TEST_SPLITS[task]})
        return out
    raise ValueError(f"unknown task {task!r}")


def score(task: str, model, arrays, batch_size: int = 1000) -> dict:
    """{"accuracy": ...} of `model` on `arrays`; palindromes add "sequence_accuracy".

    rule learning: the share of sentences classified right; composition: exact
    match of the whole output; palindromes: the share of symbols after the centre
    predicted right (the paper's measure), and the share of strings whose every
    symbol after the centre is right. "loss" is the mean cross-entropy of the same
    predictions (without regularisation), the tie-breaker of model selection.
    """
    inputs, targets, weights = arrays
    outputs = model.predict(inputs, batch_size=batch_size, verbose=0).astype(np.float64)
    # Rule-learning models output probabilities, the others logits.
    log_p = (np.log(np.maximum(outputs, 1e-12)) if task == "rule_learning" else
             outputs - np.log(np.exp(outputs - outputs.max(-1, keepdims=True)).sum(
                 -1, keepdims=True)) - outputs.max(-1, keepdims=True))
    nll = -np.take_along_axis(log_p, targets[..., None], axis=-1)[..., 0]
    right = outputs.argmax(-1) == targets
    if task == "rule_learning":
        return {"accuracy": float(right.mean()), "loss": float(nll.mean())}
    if task == "composition":
        return {"accuracy": float(right.all(axis=1).mean()), "loss": float(nll.mean())}
    return {"accuracy": float((right * weights).sum() / weights.sum()),
            "sequence_accuracy": float((right | (weights == 0)).all(axis=1).mean()),
            "loss": float((nll * weights).sum() / weights.sum())}


# ----------------------------------------------------------------------- models

def build_model(model_name: str, task: str, model_args: dict) -> keras.Model:
    """The (compiled) model `model_name` for `task`; bad arguments give a clear error."""
    if task not in MODEL_TASKS.get(model_name, ()):
        raise ValueError(f"model {model_name!r} does not train on task {task!r}; "
                         f"its tasks: {MODEL_TASKS.get(model_name)}")
    architecture = ARCHITECTURE[model_name]
    try:
        if task == "rule_learning":
            from compgen_tf.models.rule_learning import build_rule_learning_model
            return build_rule_learning_model(architecture, **model_args)
        if task == "composition":
            from compgen_tf.models.composition import build_composition_model
            return build_composition_model(architecture, **model_args)
        from compgen_tf.models.palindromes import build_palindrome_model
        return build_palindrome_model(architecture, **model_args)
    except TypeError as error:
        raise ValueError(f"bad model_args for {model_name!r} on {task!r}: {error}") from error


# --------------------------------------------------------------------- training

def train_toy_run(config: dict, run_dir, seed: int = 0, verbose: int = 1,
                  command: str = "", data: dict | None = None) -> dict:
    """Trains `config["model"]` on `config["task"]` into `run_dir`; returns its metrics.

    The library's one training path (`compgen_tf.training.fit.fit_run`): batches of the
    fit split reshuffled every epoch (`ArrayBatches`), a validation every `eval_every`
    steps (best: the highest validation accuracy, ties broken by the lower validation
    loss), early stopping, and a checkpoint from which an interrupted run resumes exactly.
    A finished run is returned as it is. `data` (from `task_data`) saves regenerating the
    datasets.
    """
    run_dir = Path(run_dir)
    metrics_file = run_dir / "metrics.json"
    prepare_run_dir(run_dir, dict(config, seed=seed))
    if metrics_file.exists():
        print(f"{run_dir} is finished: not trained again")
        return json.loads(metrics_file.read_text())
    task, training = config["task"], config["training"]
    data = data or task_data(task, seed, config["data"])
    keras.utils.set_random_seed(seed)
    model = build_model(config["model"], task, config["model_args"])
    inputs, targets, weights = data["fit"]
    arrays = (inputs, targets) if weights is None else (inputs, targets, weights)
    settings = training_settings(training, TOY_TRAINING_DEFAULTS, "every")
    summary = fit_run(model, training, run_dir,
                      ArrayBatches(arrays, settings["batch_size"], seed),
                      lambda m: score(task, m, data["validation"]), seed=seed,
                      verbose=verbose, defaults=TOY_TRAINING_DEFAULTS)
    metrics = {"model": config["model"], "task": task, "seed": seed, **summary,
               "command": command}
    metrics.update(_score_best_model(run_dir, task, data,
                                     ["validation"] + list(TEST_SPLITS[task])))
    metrics_file.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


def _score_best_model(run_dir: Path, task: str, data: dict, splits) -> dict:
    """{"accuracy", ["sequence_accuracy"], "evaluation_time_s", "versions"} of the run's best
    model on `splits` (names of `data`)."""
    import compgen_tf.models  # noqa: F401  (registers the model classes for loading)

    best = keras.saving.load_model(run_dir / BEST_MODEL)
    started = time.perf_counter()
    accuracy, sequence_accuracy = {}, {}
    for split in splits:
        scores = score(task, best, data[split])
        accuracy[split] = scores["accuracy"]
        if "sequence_accuracy" in scores:
            sequence_accuracy[split] = scores["sequence_accuracy"]
    out = {"accuracy": accuracy, "evaluation_time_s": round(time.perf_counter() - started, 1),
           "versions": package_versions()}
    if sequence_accuracy:
        out["sequence_accuracy"] = sequence_accuracy
    return out


def evaluate_run(run_dir, splits=("validation", "test"), verbose: int = 1) -> dict:
    """Scores a finished toy run's best model again and updates its `metrics.json`.

    "train" is the run's fit part (the training data less the validation carve),
    "validation" the carve, "test" every test split of the run's task (`TEST_SPLITS`:
    `long` too for palindromes, `depth_test` for palindromes_depth). The data are
    regenerated from the run's own config and seed, as in training.
    """
    run_dir = Path(run_dir)
    metrics_file = run_dir / "metrics.json"
    if not (run_dir / BEST_MODEL).exists():
        raise FileNotFoundError(f"{run_dir / BEST_MODEL} does not exist: is {run_dir} a "
                                "finished training run?")
    config = json.loads((run_dir / "config.json").read_text())
    task, seed = config["task"], config["seed"]
    data = task_data(task, seed, config["data"])
    data["train"] = data["fit"]
    names = [n for split in splits
             for n in (list(TEST_SPLITS[task]) if split == "test" else [split])]
    scored = _score_best_model(run_dir, task, data, names)
    if verbose:
        for name, value in scored["accuracy"].items():
            print(f"{name:>10}: accuracy {value:.4f}")
    metrics = json.loads(metrics_file.read_text()) if metrics_file.exists() else {}
    for key in ("accuracy", "sequence_accuracy"):
        if key in scored:
            scored[key] = {**metrics.get(key, {}), **scored[key]}
    metrics.update(scored)
    metrics_file.write_text(json.dumps(metrics, indent=2) + "\n")
    return metrics


# -------------------------------------------------------------------------- CLI

def default_run_dir(model: str, task: str, seed: int) -> Path:
    return Path("runs") / model / task / f"seed{seed}"


def resolve_config(args) -> dict:
    """The configuration of `args.model` on `args.task` with the command line's overrides."""
    if args.task not in MODEL_TASKS[args.model]:
        raise ConfigError(f"--task must be one of {list(MODEL_TASKS[args.model])} for "
                          f"{args.model}, got {args.task!r}")
    config = load_config(args.config or config_path(args.model, args.task))
    overrides = list(args.set)
    if args.steps is not None:
        overrides.append(f"training.max_steps={args.steps}")
    config = apply_overrides(config, overrides)
    check_learning_rate_schedule(config["training"], drops_once=False)
    config.update(model=args.model, task=args.task)
    config.pop("split", None)
    if args.epochs is not None:
        data = config["data"]
        sizes = {"rule_learning": 32, "composition": 1000}
        train = sizes.get(args.task, data.get("train_size", 100_000))
        fit = train - max(1, round(data.get("validation_fraction", 0.1) * train))
        batch = config["training"].get("batch_size", 64)
        config["training"]["max_steps"] = max(1, math.ceil(args.epochs * fit / batch))
    # Built once here so that bad model_args are refused before a run directory is written.
    build_model(args.model, args.task, config["model_args"])
    return config


def train_from_cli(args, command: str) -> int:
    """`python -m compgen_tf.train --model MODEL --task TASK`: one run (see the module doc)."""
    import sys

    if args.split is not None:
        print(f"error: {args.model} trains on a --task, not a SCAN --split", file=sys.stderr)
        return 2
    if args.task is None:
        print(f"error: {args.model} needs --task, one of {list(MODEL_TASKS[args.model])}",
              file=sys.stderr)
        return 2
    try:
        config = resolve_config(args)
    except (ConfigError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    run_dir = args.output or default_run_dir(args.model, args.task, args.seed)
    try:
        metrics = train_toy_run(config, run_dir, seed=args.seed,
                                verbose=0 if args.quiet else 1, command=command)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    summary = ", ".join(f"{split} {value:.4f}" for split, value in metrics["accuracy"].items())
    print(f"run {run_dir}: accuracy {summary} ({metrics['steps']} steps, "
          f"{metrics['wall_time_s']} s)")
    return 0


def results_records(metrics_list, task: str) -> dict:
    """{results name: per-seed records in the `compgen_tf.results` schema}."""
    out = {}
    for split, name in TEST_SPLITS[task].items():
        records = []
        for m in metrics_list:
            record = {"seed": m["seed"], "val_accuracy": m["accuracy"]["validation"],
                      "test_accuracy": m["accuracy"][split], "wall_time_s": m["wall_time_s"],
                      "steps": m["steps"], "best_step": m["best_step"]}
            if "sequence_accuracy" in m:
                record["test_sequence_accuracy"] = m["sequence_accuracy"][split]
            records.append(record)
        out[name] = records
    return out


def main(argv=None) -> int:
    """`python -m compgen_tf.toy_runs --model M --task T --seeds 5`: runs and results files."""
    import shlex
    import sys

    from compgen_tf.results import RESULTS_DIR, earlier_results, write_results
    from compgen_tf.train import build_parser

    parser = build_parser()
    parser.prog = "python -m compgen_tf.toy_runs"
    parser.description = "Trains seeds of a toy-task model and writes its results."
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds (default: 5)")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="train seeds FIRST..FIRST+N-1; the results file keeps the earlier "
                        "seeds of the same configuration")
    parser.add_argument("--runs-dir", default="runs", help="parent of the run directories")
    parser.add_argument("--results-dir", default=str(RESULTS_DIR))
    parser.add_argument("--variant", help="name of a variant configuration (pass it with "
                        "--config or --set): runs go to TASK_VARIANT/, results to "
                        "NAME_VARIANT.json")
    args = parser.parse_args(argv)
    command = "python -m compgen_tf.toy_runs " + shlex.join(sys.argv[1:] if argv is None else argv)
    if args.model not in MODEL_TASKS:
        parser.error(f"--model must be one of {sorted(MODEL_TASKS)}")
    try:
        config = resolve_config(args)
    except (ConfigError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.seeds < 1 or args.first_seed < 0:
        parser.error("--seeds must be at least 1 and --first-seed at least 0")
    try:
        for name in TEST_SPLITS[args.task].values():
            name = f"{name}_{args.variant}" if args.variant else name
            earlier_results(Path(args.results_dir) / args.model / f"{name}.json", args.task,
                            config)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    metrics_list = []
    for seed in range(args.first_seed, args.first_seed + args.seeds):
        task_dir = f"{args.task}_{args.variant}" if args.variant else args.task
        run_dir = Path(args.runs_dir) / args.model / task_dir / f"seed{seed}"
        metrics = train_toy_run(config, run_dir, seed=seed, verbose=0 if args.quiet else 1,
                                command=command)
        metrics_list.append(metrics)
        print(f"seed {seed}: {metrics['accuracy']} ({metrics['wall_time_s']} s)", flush=True)
    for name, records in results_records(metrics_list, args.task).items():
        name = f"{name}_{args.variant}" if args.variant else name
        path = write_results(args.model, args.task, command, records, package_versions(),
                             name=name, results_dir=Path(args.results_dir), config=config)
        print(f"{name}: test accuracy per seed {[round(r['test_accuracy'], 4) for r in records]}"
              f" -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
