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

`python -m compgen_tf reproduce --model MODEL --task TASK --seeds 5` trains the
missing seeds and writes `results/MODEL/<name>.json` (`compgen_tf.experiments.results`).
"""

from __future__ import annotations

import numpy as np

from compgen_tf import registry
from compgen_tf.experiments.experiment import Experiment
from compgen_tf.experiments.results import trained_on
from compgen_tf.experiments.run_config import as_data_config
from compgen_tf.training.batches import ArrayBatches

# The toy-task models and their tasks, and the toy pair splits: the registry's data.
MODEL_TASKS = {name: tasks for name, (_, tasks, _) in registry.TOY_MODELS.items()}
TOY_PAIR_SPLITS = registry.TOY_PAIR_SPLITS
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


def composition_pairs(seed: int, data=None) -> dict:
    """{"train", "fit", "validation", "test"}: the composition task's (command, actions)
    pairs of draw `seed`, with the validation carve of `task_data`.

    The sequence models (`--model seq2seq --split composition`) read the same pairs as the
    toy models of the same seed, so their scores compare draw by draw.
    """
    from tfds_scan import load_toy

    data = as_data_config(data)
    splits = load_toy("composition", seed)
    fit, validation = _carve(splits["train"], data.validation_fraction, seed,
                             data.validation_seed)
    return {"train": splits["train"], "fit": fit, "validation": validation,
            "test": splits["test"]}


def task_data(task: str, seed: int, data=None) -> dict:
    """{"fit", "validation", <test splits>}: (inputs, targets, sample weights or None).

    The examples are read through the task's TFDS builder (`tfds_scan.load_toy`, built
    offline on first use for this seed and size); the validation part is carved from the
    training examples by (`data.validation_seed`, `seed`).
    """
    from compgen_tf.models.symmetry.palindromes import palindrome_arrays
    from tfds_scan import load_toy, toy_tasks

    data = as_data_config(data)
    fraction, validation_seed = data.validation_fraction, data.validation_seed
    if task == "rule_learning":
        def encode(part):
            return (toy_tasks.rule_learning_array([s for s, _ in part]),
                    np.array([label for _, label in part], np.int32), None)
        splits = load_toy(task)
        fit, validation = _carve(splits["train"], fraction, seed, validation_seed)
        return {"fit": encode(fit), "validation": encode(validation),
                "test": encode(splits["test"])}
    if task == "composition":
        pairs = composition_pairs(seed, data)
        return {part: composition_arrays(pairs[part]) for part in ("fit", "validation", "test")}
    if task in ("palindromes", "palindromes_depth"):
        splits = load_toy(task, seed, train_size=data.train_size, test_size=data.test_size)
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


def results_records(metrics_list, task: str) -> dict:
    """{results name: per-seed records in the `compgen_tf.experiments.results` schema}: one
    results file per test split of `task` (`TEST_SPLITS`)."""
    out = {}
    for split, name in TEST_SPLITS[task].items():
        records = []
        for m in metrics_list:
            record = {"seed": m["seed"], "val_accuracy": m["accuracy"]["validation"],
                      "test_accuracy": m["accuracy"][split], "wall_time_s": m["wall_time_s"],
                      "steps": m["steps"], "best_step": m["best_step"]}
            if "sequence_accuracy" in m:
                record["test_sequence_accuracy"] = m["sequence_accuracy"][split]
            # The toy tasks record no commit per seed (the file's `versions` has it).
            record.update({key: value for key, value in trained_on(m).items()
                           if key != "commit"})
            records.append(record)
        out[name] = records
    return out


class ToyExperiment(Experiment):
    """A toy-task model of "Symmetry and systematicity" on its task (`RunConfig.task`),
    with the data generated from the task's grammar and the run's seed.

    Its data are the task's arrays (`task_data`: "fit", "validation" and each test split of
    `TEST_SPLITS`); the batches reshuffle the fit part every epoch (`ArrayBatches`); model
    selection reads the validation accuracy, ties broken by the lower validation loss; the
    final scores are `score`'s ("train" is the fit part, "test" every test split of the task).
    """

    kind = "toy"
    task_key = "task"
    # Where the toy tasks' trainer differs: no clipping, shorter runs.
    training_defaults = {"clip_norm": None, "max_steps": 1000, "eval_every": 100}

    def model_arg_names(self, model, task):
        import inspect

        if task == "rule_learning":
            from compgen_tf.models.symmetry.rule_learning import build_rule_learning_model as f
        elif task == "composition":
            from compgen_tf.models.symmetry.composition import build_composition_model as f
        else:
            from compgen_tf.models.symmetry.palindromes import build_palindrome_model as f
        return {p.name for p in list(inspect.signature(f).parameters.values())[1:]
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}

    def training_data(self, config, seed):
        return task_data(config.task, seed, config.data)

    def new_model(self, config, data):
        return registry.build_toy_backbone(config.model, config.task, config.model_args)

    def batches(self, model, config, data, seed):
        inputs, targets, weights = data["fit"]
        arrays = (inputs, targets) if weights is None else (inputs, targets, weights)
        return ArrayBatches(arrays, config.training.batch_size, seed)

    def validation_score(self, model, config, data):
        return lambda m: score(config.task, m, data["validation"])

    def score(self, model, config, seed, parts, run_dir, verbose=1, data=None):
        if data is None:
            data = self.training_data(config, seed)
        names = [name for part in parts
                 for name in (self.test_parts(config) if part == "test" else [part])]
        accuracy, sequence_accuracy = {}, {}
        for name in names:
            scores = score(config.task, model, data["fit" if name == "train" else name])
            accuracy[name] = scores["accuracy"]
            if "sequence_accuracy" in scores:
                sequence_accuracy[name] = scores["sequence_accuracy"]
            if verbose:
                print(f"{name:>10}: accuracy {scores['accuracy']:.4f}")
        return {"accuracy": accuracy,
                **({"sequence_accuracy": sequence_accuracy} if sequence_accuracy else {})}

    def fit_examples(self, config):
        sizes = {"rule_learning": 32, "composition": 1000}
        train = sizes.get(config.task, config.data.train_size)
        return train - max(1, round(config.data.validation_fraction * train))

    def test_parts(self, config):
        return tuple(TEST_SPLITS[config.task])

    def results_names(self, config, name):
        task = config.task
        # `--name palindromes_full_budget` (a variant of the task's configuration) writes
        # palindromes_in_domain_full_budget.json and palindromes_long_full_budget.json.
        suffix = "" if name == task else "_" + (name[len(task) + 1:]
                                                 if name.startswith(task + "_") else name)
        return [base + suffix for base in TEST_SPLITS[task].values()]

    def results_records(self, config, name, metrics_list, run_dirs):
        records = results_records(metrics_list, config.task)
        return dict(zip(self.results_names(config, name), records.values()))


TOY = ToyExperiment()
