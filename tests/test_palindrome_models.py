"""Next-symbol models of the palindrome language: scoring, the stack model, round trips."""

import json

import keras
import numpy as np
import pytest

from compgen_tf.models.symmetry.palindromes import (build_palindrome_model, palindrome_accuracy,
                                           palindrome_arrays)
from compgen_tf.experiments.toy import TOY, score, task_data


def test_arrays_score_only_the_symbols_after_the_centre():
    inputs, targets, weights = palindrome_arrays(["a b o b a", "c o c"])
    assert inputs.tolist() == [[1, 2, 5, 2], [3, 5, 3, 0]]
    assert targets.tolist() == [[2, 5, 2, 1], [5, 3, 0, 0]]
    # Targets after the centre: "b a" of the first string, "c" of the second.
    assert weights.tolist() == [[0, 0, 1, 1], [0, 1, 0, 0]]


class _Oracle:
    """Predicts the true next symbol except at the listed (string, position) pairs."""

    def __init__(self, targets, wrong):
        self.logits = np.eye(6, dtype=np.float32)[targets] * 10
        for i, t in wrong:
            self.logits[i, t] = np.eye(6)[(targets[i, t] % 5) + 1] * 10

    def predict(self, inputs, batch_size=None, verbose=0):
        return self.logits


def test_symbol_and_sequence_accuracy():
    strings = ["a b o b a", "c o c"]
    arrays = palindrome_arrays(strings)
    oracle = _Oracle(arrays[1], wrong=[(0, 3), (1, 0)])  # one scored miss, one unscored
    scores = score("palindromes", oracle, arrays)
    assert scores["accuracy"] == pytest.approx(2 / 3)
    assert scores["sequence_accuracy"] == 0.5
    assert palindrome_accuracy(oracle, strings) == {"symbol_accuracy": pytest.approx(2 / 3),
                                                    "sequence_accuracy": 0.5}


@pytest.mark.parametrize("cell", ["stack", "lstm"])
def test_models_round_trip(tmp_path, cell):
    keras.utils.set_random_seed(0)
    model = build_palindrome_model(cell, units=10 if cell == "stack" else 100)
    inputs = palindrome_arrays(["a b c o c b a", "d o d"])[0]
    before = model.predict(inputs, verbose=0)
    assert before.shape == (2, 6, 6)
    model.save(tmp_path / f"{cell}.keras")
    loaded = keras.saving.load_model(tmp_path / f"{cell}.keras")
    np.testing.assert_allclose(loaded.predict(inputs, verbose=0), before, atol=1e-6)


def test_stack_lstm_learns_to_reverse(tmp_path):
    config = json.load(open("configs/stack_lstm/palindromes.json"))
    config.update(model="stack_lstm", task="palindromes")
    config["data"].update(train_size=20_000, test_size=200, validation_fraction=0.01)
    # The reproduction's Adam 0.003 needs thousands of steps; 0.01 learns the in-domain task
    # within the suite's budget (the reproduction's earlier setting, results/*_lr0.01_*).
    config["training"].update(max_steps=1050, eval_every=350, learning_rate=0.01)
    # Seed 1: seed 0 is the slowest of seeds 0-3 at this budget and sits where float
    # rounding decides (test symbol accuracy 0.896 on one CI machine, 0.853 on another,
    # from the same commit); seeds 1-3 have converged by then on both.
    data = task_data("palindromes", 1, config["data"])
    metrics = TOY.train(TOY.run_config(config), tmp_path / "run", seed=1, verbose=0, data=data)
    curve = [json.loads(line)["val_accuracy"]
             for line in (tmp_path / "run" / "history.jsonl").read_text().splitlines()]
    # 1,050 steps are far from the 16,000 of results/stack_lstm/palindromes_in_domain.json
    # (100% in domain); this checks what this budget reaches, measured on seeds 1-3
    # (2026-12-04): symbol accuracy 0.998-1.0 test, 0.987-0.998 long, the whole suffix
    # right on 0.985-1.0 of the test strings and 0.835-0.995 of the long ones (chance is
    # 1/4 a symbol); seed 1's validation rises 0.442, 0.978, 0.999.
    assert curve == sorted(curve) and curve[0] < curve[-1] - 0.3, curve
    assert metrics["accuracy"]["test"] >= 0.97 and metrics["accuracy"]["long"] >= 0.95
    assert metrics["sequence_accuracy"]["test"] >= 0.9
    assert metrics["sequence_accuracy"]["long"] >= 0.7
    assert set(metrics["sequence_accuracy"]) == {"validation", "test", "long"}


def test_unknown_cell():
    with pytest.raises(ValueError, match="unknown cell"):
        build_palindrome_model("gru")
