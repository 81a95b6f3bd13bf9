"""Next-symbol prediction on the palindrome language S -> aSa | bSb | cSc | dSd | o.

`build_palindrome_model("stack")` is the paper's convolutional LSTM: embedding
(M = 10) -> `keras.layers.RNN(StackLSTMCell(N = 10, depth = 20))` -> softmax over
the next symbol (eq. 13). `build_palindrome_model("lstm")` is the baseline, a
standard LSTM with 100 hidden units. Inputs are symbol ids (0 = padding); the
loss and the accuracy count only the symbols after the central `o`, through
per-position sample weights (`palindrome_arrays`).

References:
    "Symmetry and systematicity" (anonymous, under review), Sec. 4, Table 3 and
    Appendix C.
"""

from __future__ import annotations

import keras
import numpy as np

from compgen_tf.layers.stack_lstm_cell import StackLSTMCell

CELLS = ("stack", "lstm")
SYMBOLS = ("<pad>", "a", "b", "c", "d", "o")  # id 0 pads


def palindrome_arrays(strings, length: int | None = None):
    """(inputs, targets, weights) for next-symbol prediction, each (n, length - 1).

    inputs[i, t] is symbol t of string i, targets[i, t] symbol t + 1; weights are 1
    where the target lies after the central `o`, 0 elsewhere (and on padding).
    """
    tokens = [text.split() for text in strings]
    length = length or max(len(t) for t in tokens)
    ids = np.zeros((len(tokens), length), np.int32)
    weights = np.zeros((len(tokens), length - 1), np.float32)
    for i, symbols in enumerate(tokens):
        if len(symbols) > length:
            raise ValueError(f"string {i} has {len(symbols)} symbols, more than {length}")
        ids[i, :len(symbols)] = [SYMBOLS.index(s) for s in symbols]
        centre = len(symbols) // 2
        weights[i, centre:len(symbols) - 1] = 1.0  # targets centre + 1 .. end
    return ids[:, :-1], ids[:, 1:], weights


def build_palindrome_model(cell: str = "stack", embedding_dim: int = 10, units: int = 10,
                           depth: int = 20, learning_rate: float = 0.01,
                           clip_norm: float = 1.0) -> keras.Model:
    """A compiled next-symbol model: ids (batch, time) -> logits (batch, time, 6)."""
    if cell not in CELLS:
        raise ValueError(f"unknown cell {cell!r}; expected one of {CELLS}")
    inputs = keras.Input(shape=(None,), dtype="int32", name="symbol_ids")
    embedded = keras.layers.Embedding(len(SYMBOLS), embedding_dim, name="embedding")(inputs)
    if cell == "stack":
        hidden = keras.layers.RNN(StackLSTMCell(units, depth), return_sequences=True,
                                  name="stack_lstm")(embedded)
    else:
        hidden = keras.layers.LSTM(units, return_sequences=True, name="lstm")(embedded)
    logits = keras.layers.Dense(len(SYMBOLS), name="next_symbol")(hidden)
    model = keras.Model(inputs, logits, name=f"palindromes_{cell}")
    model.compile(optimizer=keras.optimizers.Adam(learning_rate, global_clipnorm=clip_norm),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  weighted_metrics=["sparse_categorical_accuracy"])
    return model


def palindrome_accuracy(model, strings, batch_size: int = 500) -> dict:
    """Symbol accuracy after the centre (the paper's measure) and whole-suffix accuracy."""
    inputs, targets, weights = palindrome_arrays(strings)
    logits = model.predict(inputs, batch_size=batch_size, verbose=0)
    hits = (logits.argmax(-1) == targets) | (weights == 0)
    right = ((logits.argmax(-1) == targets) * weights).sum()
    return {"symbol_accuracy": float(right / weights.sum()),
            "sequence_accuracy": float(hits.all(axis=1).mean())}
