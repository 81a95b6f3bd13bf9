"""The recurrent-convolutional composition model (Appendix B) and its baselines."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

from compgen_tf.models.symmetry.composition import ConvolutionalEncoderDecoder, build_composition_model
from compgen_tf.models.symmetry.rule_learning import build_rule_learning_model
from compgen_tf.experiments.toy import TOY, composition_arrays, task_data
from tfds_scan import toy_tasks


def test_rule_learning_convolution_is_invariant_to_permuting_syllables():
    keras.utils.set_random_seed(0)
    model = build_rule_learning_model("convolution")
    sentences = [s for s, _ in toy_tasks.rule_learning()["train"]]
    x = toy_tasks.rule_learning_array(sentences)
    permutation = np.random.default_rng(0).permutation(x.shape[1])
    np.testing.assert_array_equal(model.predict(x[:, permutation], verbose=0),
                                  model.predict(x, verbose=0))
    mlp = build_rule_learning_model("mlp")  # no symmetry: the output moves
    assert not np.allclose(mlp.predict(x[:, permutation], verbose=0), mlp.predict(x, verbose=0))


def test_composition_model_is_equivariant_to_permuting_positions():
    keras.utils.set_random_seed(1)
    model = ConvolutionalEncoderDecoder(20, positions=11, channels=5, output_length=11)
    source = tf.constant([[0, 13], [4, 19], [9, 10]])
    logits = model(source).numpy()
    assert logits.shape == (3, 11, 11)
    permutation = np.random.default_rng(0).permutation(11)
    model.x_embedding.embeddings.assign(model.x_embedding.embeddings.numpy()[:, permutation])
    # Equal up to float32 rounding: on some CPUs the matmul rounds permuted rows differently
    # (7.2e-7 on every run on this session's machine). A broken equivariance moves logits O(1).
    np.testing.assert_allclose(model(source).numpy(), logits[..., permutation],
                               rtol=1e-5, atol=1e-5)
    assert not np.allclose(model(source).numpy(), logits, atol=1e-3)


def test_composition_model_matches_the_appendix_equations():
    keras.utils.set_random_seed(2)
    model = ConvolutionalEncoderDecoder(4, positions=3, channels=2, output_length=3)
    source = np.array([[1, 3]])
    model(source)
    x = model.x_embedding.embeddings.numpy()
    y = model.y_embedding.embeddings.numpy().reshape(4, 3, 2)
    f_o, f_r = model.f_o.numpy(), model.f_r.numpy()
    h = np.zeros((3, 2))
    for word in source[0]:
        h = np.concatenate([h, x[word][:, None]], axis=1) @ y[word]  # eqs. (1), (2)
    expected = []
    for _ in range(3):
        expected.append(h @ f_o)  # eq. (3), before the softmax
        h = h @ f_r  # eq. (4)
    np.testing.assert_allclose(model(source).numpy()[0], np.stack(expected), rtol=1e-5,
                               atol=1e-6)
    # eq. (5): the L1 penalties of both embeddings are part of the loss
    l1 = 1e-3 * (np.abs(x).sum() + np.abs(y).sum())
    np.testing.assert_allclose(float(sum(model.losses)), l1, rtol=1e-5)


def test_composition_model_round_trips(tmp_path):
    model = build_composition_model("convolution")
    source = composition_arrays(toy_tasks.composition(0)["test"])[0]
    before = model.predict(source, verbose=0)
    model.save(tmp_path / "composition.keras")
    loaded = keras.saving.load_model(tmp_path / "composition.keras")
    np.testing.assert_allclose(loaded.predict(source, verbose=0), before, atol=1e-6)
    assert loaded.get_layer("encoder_decoder").get_config()["channels"] == 5


def test_arrays_encode_actions_then_padding():
    source, target, weights = composition_arrays([("walk three", "WALK WALK WALK")])
    assert weights is None
    assert source.tolist() == [[1, 12]]
    assert target.tolist() == [[1, 1, 1] + [10] * 8]


def test_symmetric_model_learns_held_out_combinations(tmp_path):
    config = json.load(open("configs/symbol_convolution/composition.json"))
    config.update(model="symbol_convolution", task="composition")
    config["training"].update(max_steps=900, eval_every=300)
    data = task_data("composition", 0, config["data"])
    metrics = TOY.train(TOY.run_config(config), tmp_path / "run", seed=0, verbose=0, data=data)
    assert metrics["accuracy"]["test"] == 1.0
    assert metrics["accuracy"]["validation"] > 0.9


@pytest.mark.parametrize("kwargs, message", [
    ({"source_vocabulary_size": 0}, "source_vocabulary_size must be a positive integer"),
    ({"source_vocabulary_size": 20, "channels": 1.5}, "channels must be a positive integer"),
    ({"source_vocabulary_size": 20, "l1_x": -1}, "l1_x must be a non-negative number"),
])
def test_constructor_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ConvolutionalEncoderDecoder(**kwargs)


def test_unknown_architecture():
    with pytest.raises(ValueError, match="unknown architecture"):
        build_composition_model("transformer")


def test_an_mlp_over_one_hot_words_can_compose_every_pair_it_never_saw():
    """Why the MLP baseline generalises: the composition rule is additive over the two words.
    The command's weights favour its action at every output position; the modifier's favour
    padding from its count on, by more. Set by hand (one ReLU unit per word, passing its
    one-hot bit through), the MLP baseline translates all 100 pairs, none of them trained."""
    commands, modifiers = toy_tasks.COMMANDS, toy_tasks.MODIFIERS
    words, positions, length = len(commands) + len(modifiers), len(commands) + 1, 11
    model = build_composition_model("mlp", units=2 * words)
    pad = len(commands)
    out = np.zeros((2 * words, length, positions), np.float32)
    for i in range(len(commands)):
        out[i, :, i] = 1.0  # word i at position 0 of the input: its action everywhere
    for j in range(len(modifiers)):
        out[words + len(commands) + j, j + 1:, pad] = 2.0  # modifier j+1: padding after it
    hidden = model.layers[-3]
    output = model.layers[-2]
    hidden.set_weights([np.eye(2 * words, dtype=np.float32), np.zeros(2 * words, np.float32)])
    output.set_weights([out.reshape(2 * words, -1), np.zeros(length * positions, np.float32)])
    pairs = [(f"{c} {m}", " ".join([c.upper()] * (j + 1)))
             for c in commands for j, m in enumerate(modifiers)]
    source, target, _ = composition_arrays(pairs)
    predicted = model.predict(source, verbose=0).argmax(-1)
    np.testing.assert_array_equal(predicted, target)


def test_seq2seq_trains_on_the_composition_pairs_of_the_toy_models_seed(tmp_path):
    """`--model seq2seq --split composition`: the standard LSTM encoder-decoder reads the
    same draw, validation carve and test pairs as the toy models of its seed."""
    from compgen_tf import train
    from compgen_tf.experiments.scan import split_examples

    from tfds_scan import load_toy

    config = json.loads(open("configs/seq2seq/composition.json").read())
    for seed in (0, 3):
        drawn = load_toy("composition", seed)
        arrays = task_data("composition", seed, {})
        assert split_examples("composition", "test", {}, seed) == drawn["test"]
        fit, validation = (split_examples("composition", part, {}, seed)
                           for part in ("fit", "validation"))
        assert sorted(fit + validation) == sorted(drawn["train"])
        assert len(validation) == round(0.1 * len(drawn["train"]))
        np.testing.assert_array_equal(composition_arrays(fit)[0], arrays["fit"][0])
    with pytest.raises(ValueError, match="validation_carve"):
        split_examples("composition", "fit", {"validation_carve": "tail"}, 0)
    assert split_examples("composition", "test", {}, 0) != split_examples(
        "composition", "test", {}, 3)
    assert config["model_args"] == {"command_grammar": None}
    out = tmp_path / "run"
    assert train.main(["--model", "seq2seq", "--split", "composition", "--seed", "3",
                       "--output", str(out), "--steps", "20", "--quiet",
                       "--set", "training.eval_every=10", "--set", "model_args.hidden_units=16",
                       "--set", "model_args.embedding_dim=16",
                       "--evaluate-splits", "validation", "test"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics["accuracy"]) == {"validation", "test"}
    assert metrics["seed"] == 3 and json.loads((out / "config.json").read_text())["seed"] == 3
    test_pairs = split_examples("composition", "test", {}, 3)
    errors = [json.loads(line) for line in open(out / "errors_test.jsonl")]
    assert {e["command"] for e in errors} <= {c for c, _ in test_pairs}
    assert metrics["accuracy"]["test"] == pytest.approx(1 - len(errors) / len(test_pairs))


def test_composition_error_kinds():
    """`tools/composition_error_kinds.py`: the kind of each wrong output."""
    from compgen_tf.analysis import composition_errors as kinds

    assert kinds.error_kind("RUN RUN RUN", "RUN RUN") == "count"
    assert kinds.error_kind("RUN RUN", "RUN RUN RUN") == "count"
    assert kinds.error_kind("RUN RUN", "RUN JUMP") == "action"
    assert kinds.error_kind("RUN RUN", "JUMP") == "both"
    assert kinds.error_kind("RUN", "") == "count"
