"""`training.unroll`: the recurrences written out step by step compute what their loops do."""

import json

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfds_scan
from compgen_tf.models import SyntacticAttention
from compgen_tf.models.lstm_inference import bidirectional_lstm
from compgen_tf.models.unrolling import static_steps, unrolled_recurrences
from compgen_tf.training.data import encode_split
from compgen_tf.training.fit import fit_split
from compgen_tf.models.preprocessor import vocabulary_words

EXAMPLES = [(c, tfds_scan.interpret(c)) for c in tfds_scan.all_commands() if len(c.split()) <= 3]


def vocabularies():
    return (vocabulary_words(c for c, _ in EXAMPLES),
            vocabulary_words(a for _, a in EXAMPLES))


def test_static_steps_only_inside_the_context_and_only_when_known():
    tensor = tf.zeros((2, 5, 3))
    assert static_steps(tensor) is None
    with unrolled_recurrences():
        assert static_steps(tensor) == 5
        traced = []
        tf.function(lambda x: traced.append(static_steps(x)) or x).get_concrete_function(
            tf.TensorSpec([None, None, 3]))
        assert traced == [None]
    assert static_steps(tensor) is None


def test_unrolled_bidirectional_lstm_trains_as_the_layer_does():
    keras.utils.set_random_seed(0)
    layer = keras.layers.Bidirectional(keras.layers.LSTM(4, return_sequences=True))
    layer.build((None, None, 3))
    inputs = tf.constant(np.random.default_rng(0).normal(size=(2, 6, 3)), tf.float32)
    mask = tf.constant([[True] * 6, [True] * 3 + [False] * 3])

    def loss_and_gradients(unrolled):
        with tf.GradientTape() as tape:
            if unrolled:
                with unrolled_recurrences():
                    outputs = bidirectional_lstm(layer, inputs, mask, training=True)
            else:
                outputs = bidirectional_lstm(layer, inputs, mask, training=True)
            loss = tf.reduce_sum(outputs * tf.range(1.0, 9.0))
        return [loss] + tape.gradient(loss, layer.trainable_variables)

    for expected, got in zip(loss_and_gradients(False), loss_and_gradients(True)):
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_a_run_with_unrolled_steps_trains_as_one_with_loops(tmp_path):
    """No dropout and full teacher forcing: every step sees the same numbers either way.
    Syntactic Attention has both recurrences that unroll: `bidirectional_lstm` encoders and
    a `RecurrentDecoder` (the seq2seq baseline's are the same two functions)."""
    histories = []
    for unroll in (False, True):
        keras.utils.set_random_seed(0)
        model = SyntacticAttention.from_words(*vocabularies(), dropout=0.0, max_output_length=12,
                                              semantic_dim=8, syntax_embedding_dim=8,
                                              syntax_units=8, encoder_units=8)
        split = encode_split(model, EXAMPLES)
        fit_split(model, {"batch_size": 16, "learning_rate": 0.01, "max_steps": 6,
                          "eval_every": 3, "patience": 100, "jit_compile": False,
                          "unroll": unroll},
                  tmp_path / f"unroll_{unroll}", split, split, seed=3, verbose=0)
        histories.append([json.loads(line) for line in
                          (tmp_path / f"unroll_{unroll}" / "history.jsonl").read_text()
                          .splitlines()])
    assert [row["step"] for row in histories[0]] == [row["step"] for row in histories[1]]
    for loop_row, unrolled_row in zip(*histories):
        assert unrolled_row["loss"] == pytest.approx(loop_row["loss"], rel=1e-4)
        assert unrolled_row["val_accuracy"] == loop_row["val_accuracy"]


def test_unroll_is_refused_for_a_model_with_keras_own_train_step(tmp_path):
    from compgen_tf.training.fit import fit_run

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.loss = "mse"
    with pytest.raises(ValueError, match="training.unroll applies to the models with the "
                                         "library's own train step"):
        fit_run(model, {"unroll": True}, tmp_path, [], lambda m: 0.0, verbose=0)


def test_each_batch_shape_gets_one_trace_and_no_retracing_warning(caplog):
    """Six shapes are six tf.functions traced once each: TensorFlow must not warn of
    "retracing" (it counts the traces of one code object together)."""
    model = SyntacticAttention.from_words(*vocabularies(), dropout=0.0, max_output_length=12,
                                          semantic_dim=4, syntax_embedding_dim=4, syntax_units=4,
                                          encoder_units=4)
    model.compile(optimizer=keras.optimizers.SGD(0.1), unroll=True)
    model.optimizer.build(model.trainable_variables)
    train_function = model.make_train_function()
    batches = [(tf.fill([1, width], 4), tf.fill([1, width + 1], 4)) for width in range(2, 8)]
    iterator = iter(batches)
    with caplog.at_level("WARNING", logger="tensorflow"):
        for _ in batches:
            train_function(iterator)
    assert int(model.optimizer.iterations.numpy()) == len(batches)
    assert not [r for r in caplog.records if "retracing" in r.getMessage()]
