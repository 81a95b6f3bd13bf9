import numpy as np
import pytest

from compgen_tf.models.rule_learning import build_rule_learning_model, main, run_rule_learning
from compgen_tf.results import load_results


def test_symbol_convolution_generalizes_to_unseen_syllables():
    for seed in range(2):
        record = run_rule_learning("convolution", seed, epochs=150)
        assert record["test_accuracy"] == 1.0 and record["val_accuracy"] == 1.0


def test_mlp_does_not_generalize_to_unseen_syllables():
    accuracies = [run_rule_learning("mlp", seed, epochs=150)["test_accuracy"]
                  for seed in range(3)]
    assert np.mean(accuracies) < 0.9


def test_results_files_in_the_common_schema(tmp_path):
    assert main(["--seeds", "1", "--epochs", "5", "--results-dir", str(tmp_path)]) == 0
    document = load_results(tmp_path / "symbol_convolution" / "rule_learning.json")
    assert document["split"] == "rule_learning" and document["summary"]["n"] == 1
    assert (tmp_path / "symbol_convolution" / "rule_learning_mlp_baseline.json").exists()


def test_unknown_architecture():
    with pytest.raises(ValueError, match="unknown architecture"):
        build_rule_learning_model("transformer")
