"""Exact-match evaluation: a prediction counts only if the whole action sequence is right."""

from __future__ import annotations

import dataclasses

import numpy as np

from compgen_tf.training.data import EncodedSplit
from compgen_tf.tokens import PAD_ID


@dataclasses.dataclass
class SplitEvaluation:
    """Exact-match accuracy of a split and the predictions behind it."""

    accuracy: float
    correct: np.ndarray
    predictions: list

    def errors(self, split: EncodedSplit, categories=None) -> list[dict]:
        """The wrongly translated examples as {command, expected, predicted} records, each
        with its `category` too when `categories` (one per example of `split`) are given."""
        return [{"command": split.commands[i], "expected": split.actions[i],
                 "predicted": self.predictions[i],
                 **({"category": categories[i]} if categories is not None else {})}
                for i in np.flatnonzero(~self.correct)]


def sequences_equal(predicted_ids: np.ndarray, target_ids: np.ndarray) -> np.ndarray:
    """Row-wise equality of two padded id arrays of possibly different widths."""
    width = max(predicted_ids.shape[1], target_ids.shape[1])
    pad = lambda a: np.pad(a, [(0, 0), (0, width - a.shape[1])], constant_values=PAD_ID)
    return np.all(pad(predicted_ids) == pad(target_ids), axis=1)


def evaluate_split(model, split: EncodedSplit, batch_size: int = 512,
                   keep_predictions: bool = True) -> SplitEvaluation:
    """Greedy-decodes every command of `split` and scores exact match."""
    # Exact match compares ids. An output without <eos> within max_output_length is never
    # right: where the target has <eos> it has a token, and a target of max_output_length
    # tokens is one id wider than any output (its <eos> needs one more step), so it never
    # matches either, although its tokens could be the output's. That is what `translate`
    # and the export answer (`Seq2SeqModel.serving_outputs`: "" and "no <eos> within ...").
    # The predictions kept for BLEU and the errors files are the decoded tokens, those of a
    # cut-off output included (BLEU gives a partial output partial credit).
    # The rows go to the decoder shortest source first (a stable sort), so that the rows of a
    # batch stop at about the same step: a batch decodes until its longest output ends. On
    # COGS' gen set (outputs of 1 to 480 tokens, the categories interleaved) that halves the
    # steps of the file's order: 3,852 against 7,533 over its 512-row batches, were every
    # output as long as its reference. Each row is decoded on its own (its padding masked),
    # so the scores are those of any order; they are returned in the split's order.
    order = np.argsort((split.source_ids != PAD_ID).sum(axis=1), kind="stable")
    correct = np.zeros(len(split), dtype=bool)
    predictions = [None] * len(split) if keep_predictions else []
    for start in range(0, len(split), batch_size):
        rows = order[start:start + batch_size]
        predicted = model._greedy_decode_graph(split.source_ids[rows])
        correct[rows] = sequences_equal(predicted.numpy(), split.target_ids[rows])
        if keep_predictions:
            actions, _ = model.decode_actions(predicted)
            for row, action in zip(rows, actions.numpy()):
                predictions[row] = action.decode()
    return SplitEvaluation(float(correct.mean()), correct, predictions)
