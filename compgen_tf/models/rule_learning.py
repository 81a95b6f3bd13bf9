"""Rule learning (Marcus et al. 1999) with a width-1 convolution over syllables, and baselines.

Inputs are the (12, 3) arrays of `tfds_scan.toy_tasks.rule_learning_array`:
syllables as positions, time steps as channels; outputs, the probability of ABA
and ABB. The convolution applies the same filter to every syllable (it is
equivariant to permutations of the syllables) and max-pooling over syllables
makes the prediction invariant to them, so the rule learned on the 8 training
syllables carries over to the 4 unseen test syllables. The MLP and the
recurrent net see which syllable is where, and the weights of unseen syllables
never move.

References:
    "Symmetry and systematicity" (anonymous, under review), Sec. 2 and Table 1.
"""

from __future__ import annotations

import keras

ARCHITECTURES = ("convolution", "mlp", "recurrent")


def build_rule_learning_model(architecture: str = "convolution", units: int = 8,
                              syllables: int = 12, steps: int = 3) -> keras.Model:
    """A compiled classifier of (syllables, steps) arrays into ABA (0) / ABB (1)."""
    if architecture not in ARCHITECTURES:
        raise ValueError(f"unknown architecture {architecture!r}; expected one of "
                         f"{ARCHITECTURES}")
    inputs = keras.Input(shape=(syllables, steps), name="syllables_by_time")
    if architecture == "convolution":
        # Width 1 over the syllable axis: one filter bank shared by every syllable.
        hidden = keras.layers.Conv1D(units, 1, activation="relu", name="symbol_convolution")(
            inputs)
        hidden = keras.layers.GlobalMaxPooling1D(name="max_over_syllables")(hidden)
    elif architecture == "mlp":
        hidden = keras.layers.Dense(units, activation="relu")(keras.layers.Flatten()(inputs))
    else:
        # The sentence in time order: one 12-way one-hot syllable per step.
        sequence = keras.layers.Permute((2, 1))(inputs)
        hidden = keras.layers.SimpleRNN(units)(sequence)
    outputs = keras.layers.Dense(2, activation="softmax", name="rule")(hidden)
    model = keras.Model(inputs, outputs, name=f"rule_learning_{architecture}")
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model


def run_rule_learning(architecture: str, seed: int, epochs: int = 200,
                      validation_size: int = 8) -> dict:
    """Trains one seed; returns its record in the results schema (accuracies as fractions).

    The validation sentences are carved from the training ones by `seed`; the
    model after the last epoch is scored (no selection is needed on this task).
    """
    import time

    import numpy as np

    from tfds_scan import toy_tasks

    data = toy_tasks.rule_learning()
    order = np.random.default_rng(seed).permutation(len(data["train"]))
    validation = [data["train"][i] for i in order[:validation_size]]
    fit = [data["train"][i] for i in order[validation_size:]]
    arrays = {name: (toy_tasks.rule_learning_array([s for s, _ in part]),
                     np.array([label for _, label in part]))
              for name, part in (("fit", fit), ("validation", validation),
                                 ("test", data["test"]))}
    keras.utils.set_random_seed(seed)
    model = build_rule_learning_model(architecture)
    started = time.perf_counter()
    model.fit(*arrays["fit"], epochs=epochs, batch_size=len(fit), verbose=0)
    accuracy = {name: float(model.evaluate(*arrays[name], verbose=0)[1])
                for name in ("validation", "test")}
    return {"seed": seed, "val_accuracy": accuracy["validation"],
            "test_accuracy": accuracy["test"],
            "wall_time_s": round(time.perf_counter() - started, 1), "steps": epochs}


def main(argv=None) -> int:
    """`python -m compgen_tf.models.rule_learning --seeds 5`: every architecture, results files."""
    import argparse
    import shlex
    import sys
    from pathlib import Path

    from compgen_tf.results import RESULTS_DIR, write_results
    from compgen_tf.versions import package_versions

    parser = argparse.ArgumentParser(prog="python -m compgen_tf.models.rule_learning",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=200)
    parser.add_argument("--results-dir", default=str(RESULTS_DIR))
    args = parser.parse_args(argv)
    command = "python -m compgen_tf.models.rule_learning " + shlex.join(
        sys.argv[1:] if argv is None else argv)
    names = {"convolution": "rule_learning", "mlp": "rule_learning_mlp_baseline",
             "recurrent": "rule_learning_recurrent_baseline"}
    for architecture, name in names.items():
        runs = [run_rule_learning(architecture, seed, args.epochs) for seed in range(args.seeds)]
        path = write_results("symbol_convolution", "rule_learning", command, runs,
                             package_versions(), name=name, results_dir=Path(args.results_dir),
                             architecture=architecture)
        print(f"{architecture}: test accuracy per seed "
              f"{[round(r['test_accuracy'], 3) for r in runs]} -> {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
