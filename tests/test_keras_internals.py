"""Keras' private code is reached from one module only, and what it reaches still exists."""

import ast
from pathlib import Path

import keras

import compgen_tf
import tfds_scan
from compgen_tf import keras_internals

PACKAGES = [Path(compgen_tf.__file__).parent, Path(tfds_scan.__file__).parent]
INTERNALS = Path(keras_internals.__file__).resolve()


def _private_keras_uses(path: Path):
    """(line, what) for every import of `keras.src` and every `keras.src` attribute in `path`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "keras.src" or alias.name.startswith("keras.src."):
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "keras.src" or node.module.startswith("keras.src."):
                yield node.lineno, f"from {node.module} import ..."
            if node.module == "keras" and any(a.name == "src" for a in node.names):
                yield node.lineno, "from keras import src"
        elif (isinstance(node, ast.Attribute) and node.attr == "src"
              and isinstance(node.value, ast.Name) and node.value.id == "keras"):
            yield node.lineno, "keras.src"


def test_only_keras_internals_reaches_into_keras_src():
    found = [f"{path}:{line}: {what}"
             for package in PACKAGES for path in sorted(package.rglob("*.py"))
             if path.resolve() != INTERNALS
             for line, what in _private_keras_uses(path)]
    assert found == []


def test_the_scan_finds_each_form_of_a_private_import(tmp_path):
    path = tmp_path / "module.py"
    path.write_text("import keras.src.ops\nfrom keras.src.layers import Layer\n"
                    "from keras import src\nimport keras\nx = keras.src.backend\n"
                    "from keras import ops\ny = keras.ops.sum\n")
    assert [line for line, _ in _private_keras_uses(path)] == [1, 2, 3, 5]


def test_dropout_rnn_cell_is_the_class_keras_rnn_checks():
    # keras.layers.RNN resets a cell's masks only if it is an instance of this very class:
    # Keras' own LSTMCell is one.
    assert issubclass(keras.layers.LSTMCell, keras_internals.DropoutRNNCell)
    assert callable(keras_internals.DropoutRNNCell.reset_dropout_mask)


def test_skip_symbolic_build_overrides_a_method_keras_calls():
    assert callable(getattr(keras.Model, "_maybe_symbolic_build", None))


def test_a_task_model_reports_only_its_own_loss_tracker():
    import numpy as np
    import tensorflow as tf

    from compgen_tf.models import AttentionSeq2Seq
    from compgen_tf.training.data import encode_split

    keras.utils.set_random_seed(0)
    task = AttentionSeq2Seq.from_words(["jump", "twice"], ["I_JUMP"], embedding_dim=4,
                                       hidden_units=4, max_output_length=4)
    task.translate(["jump"])  # built before it is compiled: the tracker exists already
    task.compile(optimizer=keras.optimizers.Adam(0.01))
    assert task.metrics == [task.loss_tracker] and task.metrics_names == ["loss"]
    split = encode_split(task, [("jump", "I_JUMP"), ("jump twice", "I_JUMP I_JUMP")])
    source, target = split.source_ids, split.target_ids
    dataset = tf.data.Dataset.from_tensors((source, target))
    history = task.fit(dataset, epochs=2, shuffle=False, verbose=0)
    assert list(history.history) == ["loss"] and len(history.history["loss"]) == 2
    result = task.evaluate(dataset, verbose=0, return_dict=True)
    summed, tokens = task.token_loss((source, target), training=False)
    assert list(result) == ["loss"]
    assert np.isclose(result["loss"], float(summed) / float(tokens), rtol=1e-6)
