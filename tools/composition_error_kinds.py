"""What the composition baselines get wrong: the wrong action, or the right action a wrong
number of times.

    python scripts/composition_error_kinds.py --runs-dir RUNS [--seeds 5]
        [--out results/checks/composition_error_kinds.json]

Reads the finished composition runs of `symbol_convolution`, `mlp_baseline`,
`recurrent_baseline` (toy runs: `RUNS/<model>/composition/seed<N>`) and `seq2seq`
(`RUNS/seq2seq/composition/seed<N>`, trained with `--split composition`), decodes each
seed's test pairs with the run's best model, and classifies every wrong one:

- `count`: only the held-out command's action, repeated too few or too many times;
- `action`: as many actions as expected, not all of them the command's;
- `both`: neither.

Seed N of every model has the same pairs (the draw of seed N), so a row compares the models
on the same three held-out combinations. Prints the per-seed table and writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

TOY_MODELS = ("symbol_convolution", "mlp_baseline", "recurrent_baseline")
MODELS = TOY_MODELS + ("seq2seq",)


def error_kind(expected: str, predicted: str) -> str:
    """"count", "action" or "both" for a wrong output (see the module docstring)."""
    expected, predicted = expected.split(), predicted.split()
    if len(predicted) != len(expected):
        return "count" if set(predicted) <= {expected[0]} else "both"
    return "action"


def toy_predictions(run_dir: Path, pairs) -> list[str]:
    """The outputs a toy composition run's best model gives for `pairs`, as action strings."""
    import keras

    import compgen_tf.models  # noqa: F401  (registers the layers for loading)
    from compgen_tf.experiments.toy import composition_arrays
    from tfds_scan import toy_tasks

    actions = [command.upper() for command in toy_tasks.COMMANDS]
    model = keras.saving.load_model(run_dir / "best_model.keras")
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
    """The outputs of a seq2seq composition run for `pairs`, from its `errors_test.jsonl`
    (written by the run's own evaluation; a pair not listed there was translated right)."""
    wrong = {}
    with open(run_dir / "errors_test.jsonl") as errors:
        for line in errors:
            record = json.loads(line)
            wrong[record["command"]] = record["predicted"]
    return [wrong.get(command, actions) for command, actions in pairs]


def seed_report(model: str, run_dir: Path, pairs) -> dict:
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs-dir", required=True, help="the runs directory of the runs")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (default 5)")
    parser.add_argument("--out", help="also write the JSON to this file")
    args = parser.parse_args(argv)
    runs = Path(args.runs_dir)
    missing = [str(runs / model / "composition" / f"seed{seed}") for model in MODELS
               for seed in range(args.seeds)
               for needed in (("metrics.json", "errors_test.jsonl") if model == "seq2seq"
                              else ("metrics.json", "best_model.keras"))
               if not (runs / model / "composition" / f"seed{seed}" / needed).exists()]
    if missing:
        print(f"error: not a finished run: {missing[0]} (and {len(missing) - 1} more)",
              file=sys.stderr)
        return 2

    from compgen_tf.experiments.toy import composition_pairs

    report = {"runs_dir": str(runs), "seeds": {}}
    for seed in range(args.seeds):
        runs_of_seed = {model: runs / model / "composition" / f"seed{seed}" for model in MODELS}
        data = json.loads((runs_of_seed["seq2seq"] / "config.json").read_text())["data"]
        pairs = composition_pairs(seed, data)["test"]
        report["seeds"][str(seed)] = {
            "held_out": sorted(set(command for command, _ in pairs)),
            **{model: seed_report(model, run_dir, pairs)
               for model, run_dir in runs_of_seed.items()}}
        row = report["seeds"][str(seed)]
        print(f"seed {seed} ({', '.join(row['held_out'])}): " + "; ".join(
            f"{model} {row[model]['right']}/{row[model]['test_pairs']}"
            + "".join(f" [{e['command']} -> {len(e['predicted'].split())} actions, {e['kind']}]"
                      for e in row[model]["errors"]) for model in MODELS))
    text = json.dumps(report, indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
