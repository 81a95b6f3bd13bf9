"""What the composition baselines get wrong: the wrong action, or the right action a wrong
number of times.

A wrong output of a composition run is one of three kinds:

- `count`: only the held-out command's action, repeated too few or too many times;
- `action`: as many actions as expected, not all of them the command's;
- `both`: neither.

The toy composition runs (`symbol_convolution`, `mlp_baseline`, `recurrent_baseline`) are
decoded with their best model; a `seq2seq` composition run's outputs come from its own
`errors_test.jsonl` (`tools/composition_error_kinds.py`).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

TOY_MODELS = ("symbol_convolution", "mlp_baseline", "recurrent_baseline")
MODELS = TOY_MODELS + ("seq2seq",)


def error_kind(expected: str, predicted: str) -> str:
    """The kind of a wrong output (see the module docstring).

    Args:
        expected: the expected actions.
        predicted: the (wrong) output.

    Returns:
        "count", "action" or "both".
    """
    expected, predicted = expected.split(), predicted.split()
    if len(predicted) != len(expected):
        return "count" if set(predicted) <= {expected[0]} else "both"
    return "action"


def toy_predictions(run_dir: Path, pairs) -> list[str]:
    """The outputs a toy composition run's best model gives for `pairs`.

    Args:
        run_dir: a finished toy composition run (with `best_model.keras`).
        pairs: (command, actions) pairs.

    Returns:
        The outputs, as action strings; padding before an action shows as `<pad>`.
    """
    import keras

    import compgen_tf.models  # noqa: F401  (registers the layers for loading)
    from compgen_tf.experiments.toy import composition_arrays
    from tfds_scan import toy_tasks

    actions = [command.upper() for command in toy_tasks.COMMANDS]
    model = keras.saving.load_model(Path(run_dir) / "best_model.keras")
    source, _, _ = composition_arrays(pairs)
    ids = model.predict(source, verbose=0).argmax(-1)
    # The trailing padding ends an output; padding before an action is shown as `<pad>`, so
    # that an output is right exactly when its whole row of ids is (as `toy.score` counts).
    outputs = []
    for row in ids:
        words = [actions[i] if i < len(actions) else "<pad>" for i in row]
        while words and words[-1] == "<pad>":
            words.pop()
        outputs.append(" ".join(words))
    return outputs


def seq2seq_predictions(run_dir: Path, pairs) -> list[str]:
    """The outputs of a seq2seq composition run for `pairs`, from its `errors_test.jsonl`.

    Args:
        run_dir: a finished seq2seq composition run; its `errors_test.jsonl` was written by
            the run's own evaluation (a pair not listed there was translated right).
        pairs: (command, actions) pairs.

    Returns:
        The outputs, as action strings.
    """
    wrong = {}
    with open(Path(run_dir) / "errors_test.jsonl") as errors:
        for line in errors:
            record = json.loads(line)
            wrong[record["command"]] = record["predicted"]
    return [wrong.get(command, actions) for command, actions in pairs]


def seed_report(model: str, run_dir: Path, pairs) -> dict:
    """The errors of one composition run on `pairs`, each with its kind.

    Args:
        model: one of `MODELS`.
        run_dir: the finished run.
        pairs: the seed's test (command, actions) pairs.

    Returns:
        The number of test pairs and of right ones, the distinct errors (command, expected,
        predicted, count, kind) and the count of each kind.
    """
    predict = seq2seq_predictions if model == "seq2seq" else toy_predictions
    predicted = predict(run_dir, pairs)
    wrong = Counter((command, expected, output)
                    for (command, expected), output in zip(pairs, predicted)
                    if output != expected)
    errors = [{"command": command, "expected": expected, "predicted": output, "count": n,
               "kind": error_kind(expected, output)}
              for (command, expected, output), n in sorted(wrong.items())]
    kinds = Counter()
    for error in errors:
        kinds[error["kind"]] += error["count"]
    return {"test_pairs": len(pairs), "right": len(pairs) - sum(wrong.values()),
            "errors": errors, "kinds": dict(sorted(kinds.items()))}
