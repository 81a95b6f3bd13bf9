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
