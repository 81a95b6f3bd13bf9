"""Can the output length be learned so that it extrapolates? A `WeightedAutomaton` on SCAN.

    python tools/length_automaton.py --split length_dev [--seeds 3] [--state-size 4]
        [--steps 20000] [--left-to-right] [--offset-l1 C] [--predictions DIR]
        [--out results/checks/length_automaton_length_dev.json]

A design study for issue 36 (docs/length_generalization.md, section 4). The layer reads a
command right to left with one affine map per word and returns a number; it is fitted with
`model.fit` (mean squared error, Adam with a cosine decay, batches of 256) to the number of
actions of each training command, and then asked for the test commands, whose outputs are
longer than any training output. Reports, per seed, the share of commands whose rounded
prediction is the exact length, on the training and on the test commands, and the mean
absolute error. The lengths come from the split's own examples: the automaton never sees
an action.

With `--predictions DIR`, writes `DIR/seed<N>.json` ({command: predicted length} for the
test commands), which `tools/length_oracle_decoding.py --lengths FILE` decodes with.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402


# Every split this study is run on is a development split built from training data, and its
# settings were chosen on those splits (docs/length_generalization.md, sections 4 and 8).
PROVENANCE = {"kind": "validation", "reason": "a development split built from the length "
              "training file; the automaton's settings were chosen on development splits only"}


def encode(commands, index, width):
    ids = np.zeros((len(commands), width), "int32")
    for row, command in enumerate(commands):
        tokens = [index[w] for w in command.split()]
        ids[row, :len(tokens)] = tokens
    return ids


def fit_automaton(train_ids, train_lengths, vocabulary_size, state_size, steps, seed,
                  batch_size=256, learning_rate=3e-3, go_backwards=True, offset_l1=0.0):
    """A `WeightedAutomaton` fitted to the lengths; returns the trained functional model.
    `offset_l1`: an L1 penalty on the words' offsets b_x (section 8)."""
    import keras

    from compgen_tf.layers import WeightedAutomaton

    keras.utils.set_random_seed(seed)
    inputs = keras.Input(shape=(None,), dtype="int32", name="command_ids")
    regularizer = keras.regularizers.L1(offset_l1) if offset_l1 else None
    outputs = WeightedAutomaton(vocabulary_size, state_size, go_backwards=go_backwards,
                                offset_regularizer=regularizer, name="length")(inputs)
    model = keras.Model(inputs, outputs)
    per_epoch = -(-len(train_ids) // batch_size)
    epochs = -(-steps // per_epoch)
    schedule = keras.optimizers.schedules.CosineDecay(learning_rate, epochs * per_epoch)
    model.compile(optimizer=keras.optimizers.Adam(schedule, global_clipnorm=1.0), loss="mse")
    model.fit(train_ids, train_lengths.astype("float32"), batch_size=batch_size,
              epochs=epochs, shuffle=True, verbose=0)
    return model


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="length_dev", help="a SCAN split (default length_dev)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--state-size", type=int, default=4)
    parser.add_argument("--steps", type=int, default=20000, help="Adam updates (rounded up to "
                                                                "whole epochs)")
    parser.add_argument("--left-to-right", action="store_true",
                        help="read commands from their first word (default: from the last)")
    parser.add_argument("--offset-l1", type=float, default=0.0,
                        help="L1 penalty on the words' offsets b_x (default 0: none)")
    parser.add_argument("--out", help="also write the JSON report to this file")
    parser.add_argument("--predictions", help="a folder for each seed's test predictions")
    args = parser.parse_args(argv)

    from tfds_scan.splits import split_examples

    try:
        examples = split_examples(args.split)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    train, test = examples["train"], examples["test"]
    words = sorted({w for command, _ in train for w in command.split()})
    unknown = sorted({w for command, _ in test for w in command.split()} - set(words))
    if unknown:
        print(f"error: test words never seen in training: {unknown}", file=sys.stderr)
        return 2
    index = {w: i + 1 for i, w in enumerate(words)}  # 0 is padding
    width = max(len(c.split()) for c, _ in train + test)
    train_ids = encode([c for c, _ in train], index, width)
    test_ids = encode([c for c, _ in test], index, width)
    train_lengths = np.array([len(a.split()) for _, a in train])
    test_lengths = np.array([len(a.split()) for _, a in test])

    seeds = []
    for seed in range(args.seeds):
        started = time.perf_counter()
        model = fit_automaton(train_ids, train_lengths, len(words) + 1, args.state_size,
                              args.steps, seed, go_backwards=not args.left_to_right,
                              offset_l1=args.offset_l1)
        train_pred = model.predict(train_ids, batch_size=4096, verbose=0)
        test_pred = model.predict(test_ids, batch_size=4096, verbose=0)
        row = {"seed": seed,
               "train_exact_length": float(np.mean(np.round(train_pred) == train_lengths)),
               "test_exact_length": float(np.mean(np.round(test_pred) == test_lengths)),
               "test_mean_absolute_error": float(np.mean(np.abs(test_pred - test_lengths))),
               "test_largest_error": float(np.max(np.abs(test_pred - test_lengths))),
               "wall_time_s": round(time.perf_counter() - started, 1)}
        seeds.append(row)
        print(json.dumps(row), flush=True)
        if args.predictions:
            folder = Path(args.predictions)
            folder.mkdir(parents=True, exist_ok=True)
            predicted = {c: int(np.round(p)) for (c, _), p in zip(test, test_pred)}
            (folder / f"seed{seed}.json").write_text(json.dumps(predicted) + "\n")
    report = {
        "script": "tools/length_automaton.py",
        "command": "python tools/length_automaton.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "split": args.split, "state_size": args.state_size, "steps": args.steps,
        "offset_l1": args.offset_l1, "provenance": PROVENANCE,
        "reads": "left to right" if args.left_to_right else "right to left",
        "train_commands": len(train), "test_commands": len(test),
        "train_lengths": [int(train_lengths.min()), int(train_lengths.max())],
        "test_lengths": [int(test_lengths.min()), int(test_lengths.max())],
        "seeds": seeds,
    }
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
