"""`run_layer_test`: what every public layer must do in a Keras model, on any backend.

The checks Keras and keras-hub make of their own layers, written for ours: a config round
trip, symbolic build on `keras.Input`s, an eager call, `model.fit` steps in a functional
model (weights move, the loss stays finite), a `.keras` save/load round trip with identical
outputs, and a mixed-precision dtype policy. Backend-independent (`keras.ops` and NumPy only),
so `tests/test_backends.py` runs it under JAX and PyTorch as well as TensorFlow.
"""

from __future__ import annotations

import keras
import numpy as np
from keras import ops

numpy = ops.convert_to_numpy


def _as_list(value):
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _symbolic_inputs(input_data):
    """One `keras.Input` per array, batch dimension left unknown."""
    return [keras.Input(shape=np.shape(x)[1:], batch_size=None, dtype=str(np.asarray(x).dtype))
            for x in input_data]


def _functional_model(make_layer, input_data, wrap):
    inputs = _symbolic_inputs(input_data)
    layer = make_layer()
    outputs = (wrap(layer) if wrap else layer)(*inputs)
    return keras.Model(inputs, outputs), layer, inputs, outputs


def _first(outputs):
    return _as_list(outputs)[0]


def run_layer_test(layer_cls, init_kwargs: dict, input_data, expected_output_shape,
                   expected_num_trainable_weights: int, expected_num_non_trainable_variables=0,
                   wrap=None, run_training_check=True, run_precision_check=True, tmp_path=None,
                   jit_compile=False):
    """Checks a layer the way Keras checks its own; raises `AssertionError` on the first failure.

    Args:
        layer_cls: the layer class.
        init_kwargs: constructor arguments.
        input_data: an array or a list of arrays (positional call arguments), batch first.
        expected_output_shape: the output's shape on `input_data`, or a list of shapes for
            a layer with several outputs (of the wrapped layer when `wrap` is given).
        expected_num_trainable_weights, expected_num_non_trainable_variables: of the layer.
        wrap: optional function from the layer to what goes in the model (e.g.
            `keras.layers.RNN` for a cell).
        run_training_check: fit the functional model for two steps and check that every
            trainable weight moved.
        run_precision_check: build under the `mixed_bfloat16` policy and check that
            the weights stay float32 and the output is bfloat16.
        tmp_path: a directory for the `.keras` round trip (skipped without one).
        jit_compile: passed to `compile` for the training check on TensorFlow. JAX always
            compiles it, as its own default does: unjitted, every op and every scan step
            would dispatch on its own, which nobody trains with and which takes twice as long.
    """
    input_data = _as_list(input_data)
    expected = [tuple(s) for s in (expected_output_shape
                                   if isinstance(expected_output_shape, list)
                                   else [expected_output_shape])]

    # 1. Config round trip: the revived layer has the same config, through Keras' serializer.
    layer = layer_cls(**init_kwargs)
    config = layer.get_config()
    revived = layer_cls.from_config(config)
    assert revived.get_config() == config, "from_config(get_config()) changed the config"
    revived = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert type(revived) is layer_cls and revived.get_config() == config, \
        "serialize/deserialize_keras_object changed the layer"

    # 2. Symbolic: a functional model on keras.Input; output shapes match, batch unknown.
    model, layer, _, symbolic = _functional_model(lambda: layer_cls(**init_kwargs), input_data,
                                                  wrap)
    assert layer.built, "the layer was not built by a symbolic call"
    assert len(layer.trainable_weights) == expected_num_trainable_weights, \
        f"{len(layer.trainable_weights)} trainable weights, expected " \
        f"{expected_num_trainable_weights}"
    # Non-trainable variables include seed-generator states (dropout), which are no weights.
    assert len(layer.non_trainable_variables) == expected_num_non_trainable_variables, \
        f"{len(layer.non_trainable_variables)} non-trainable variables, expected " \
        f"{expected_num_non_trainable_variables}"
    for tensor, shape in zip(_as_list(symbolic), expected):
        assert tuple(tensor.shape) == (None,) + shape[1:], \
            f"symbolic output shape {tuple(tensor.shape)}, expected {(None,) + shape[1:]}"

    # 3. Eager: the same layer called on arrays gives finite outputs of the expected shapes.
    eager = model(input_data)
    for tensor, shape in zip(_as_list(eager), expected):
        value = numpy(tensor)
        assert value.shape == shape, f"eager output shape {value.shape}, expected {shape}"
        assert np.all(np.isfinite(value)), "eager output is not finite"

    # 4. Training: plain compile/fit moves every trainable weight and keeps the loss finite.
    if run_training_check and expected_num_trainable_weights:
        train_model = keras.Model(model.inputs, _first(model.outputs))
        before = [numpy(w).copy() for w in layer.trainable_weights]
        train_model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse",
                            jit_compile=jit_compile or keras.backend.backend() == "jax")
        target = np.ones(expected[0], np.float32)
        history = train_model.fit(input_data, target, batch_size=len(target), epochs=2,
                                  verbose=0)
        assert all(np.isfinite(history.history["loss"])), "training loss is not finite"
        for weight, old in zip(layer.trainable_weights, before):
            assert not np.array_equal(numpy(weight), old), f"fit did not change {weight.path}"

    # 5. Saving: a .keras file of the model reloads with identical outputs.
    if tmp_path is not None:
        path = str(tmp_path / f"{layer_cls.__name__}.keras")
        model.save(path)
        loaded = keras.saving.load_model(path)
        for a, b in zip(_as_list(model(input_data)), _as_list(loaded(input_data))):
            np.testing.assert_array_equal(numpy(a), numpy(b))

    # 6. Mixed precision: float32 weights, bfloat16 computation.
    if run_precision_check:
        mixed = layer_cls(**init_kwargs, dtype="mixed_bfloat16")
        outputs = (wrap(mixed) if wrap else mixed)(*input_data)
        for weight in mixed.weights:
            if weight.trainable:
                assert weight.dtype == "float32", f"{weight.path} is {weight.dtype}"
        out = _first(outputs)
        assert keras.backend.standardize_dtype(out.dtype) == "bfloat16", \
            f"mixed_bfloat16 output is {out.dtype}"
        assert np.all(np.isfinite(numpy(ops.cast(out, "float32"))))
    return model
