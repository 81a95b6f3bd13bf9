"""`bidirectional_lstm`: the hoisted inference path gives what the Keras layer gives."""

import keras
import numpy as np
import pytest

from compgen_tf.models.lstm_inference import bidirectional_lstm


def bidirectional(return_state, units=5):
    keras.utils.set_random_seed(0)
    layer = keras.layers.Bidirectional(
        keras.layers.LSTM(units, return_sequences=True, return_state=return_state))
    layer.build((None, None, 3))
    # Biases away from zero, so that a wrong gate order or a missed bias shows.
    for rnn in (layer.forward_layer, layer.backward_layer):
        rnn.cell.bias.assign(np.random.default_rng(1).normal(size=rnn.cell.bias.shape))
    return layer


@pytest.mark.parametrize("return_state", [False, True])
def test_hoisted_run_equals_the_layer_with_any_mask(return_state):
    layer = bidirectional(return_state)
    inputs = np.random.default_rng(2).normal(size=(4, 6, 3)).astype("float32")
    mask = np.array([[1, 1, 1, 1, 1, 1],   # full
                     [1, 1, 1, 0, 0, 0],   # padded at the end
                     [1, 0, 1, 1, 0, 1],   # holes
                     [0, 0, 0, 0, 0, 0]],  # nothing
                    bool)
    for given_mask in (mask, None):
        expected = layer(inputs, mask=given_mask)
        got = bidirectional_lstm(layer, inputs, given_mask)
        expected = expected if return_state else [expected]
        got = got if return_state else [got]
        assert len(got) == len(expected) == (5 if return_state else 1)
        for e, g in zip(expected, got):
            np.testing.assert_allclose(keras.ops.convert_to_numpy(g),
                                       keras.ops.convert_to_numpy(e), atol=1e-6)


def test_training_and_symbolic_calls_go_to_the_layer(monkeypatch):
    layer = bidirectional(return_state=False)
    calls = []
    original = keras.layers.Bidirectional.__call__

    def counted(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(keras.layers.Bidirectional, "__call__", counted)
    inputs = np.ones((1, 2, 3), "float32")
    bidirectional_lstm(layer, inputs, training=True)
    symbolic = bidirectional_lstm(layer, keras.Input((None, 3)))
    assert len(calls) == 2 and isinstance(symbolic, keras.KerasTensor)
    bidirectional_lstm(layer, inputs)
    assert len(calls) == 2
