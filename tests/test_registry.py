"""Every registered model: a task model from `registry.build`, a functional backbone that
`summary()` and `plot_model` show, and a few steps of plain `fit` on data read through the
repository's TFDS builders."""

import json
import os
import shutil
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

import tfds_scan
from compgen_tf import registry
from compgen_tf.experiments.kinds import experiment_for
from compgen_tf.models.backbone import Backbone
from compgen_tf.models.toy_task import ToyTask

TINY = {
    "seq2seq": dict(embedding_dim=8, hidden_units=8, max_output_length=8),
    "counting_seq2seq": dict(embedding_dim=8, hidden_units=8, max_output_length=8),
    "equivariant_seq2seq": dict(embedding_dim=4, hidden_units=4, max_output_length=8),
    "syntactic_attention": dict(semantic_dim=8, syntax_embedding_dim=8, syntax_units=8,
                                encoder_units=8, max_output_length=8),
    "meta_seq2seq": dict(embedding_dim=8, hidden_units=8, num_layers=1, max_output_length=8),
    "transformer": dict(width=8, num_layers=1, num_heads=2, feedforward_dim=16,
                        max_output_length=8),
}

# The least relative drop of each model's loss on its fixed batches after the 2 epochs of
# `test_each_task_model_fits_with_plain_fit_on_tfds_data`: half the drop measured there
# (seed 0, this CPU, 2026-12-01; measured loss before -> after in the comment), rounded down.
LOSS_DROP = {
    "counting_seq2seq": 0.01,     # 20.818 -> 20.250 (2.7%)
    "equivariant_seq2seq": 0.04,  # 1.938 -> 1.774 (8.5%)
    "lstm_baseline": 0.03,        # 0.692 -> 0.651 (6.0%)
    "meta_seq2seq": 0.015,        # 1.627 -> 1.572 (3.4%)
    "mlp_baseline": 0.14,         # 0.835 -> 0.601 (28%)
    "recurrent_baseline": 0.2,    # 0.955 -> 0.541 (43%)
    "seq2seq": 0.03,              # 1.945 -> 1.826 (6.2%)
    "stack_lstm": 0.015,          # 0.691 -> 0.668 (3.3%)
    "symbol_convolution": 0.14,   # 1.663 -> 1.197 (28%)
    "syntactic_attention": 0.01,  # 1.950 -> 1.900 (2.6%)
    "transformer": 0.11,          # 2.154 -> 1.644 (23.7%)
}

# Each model's loss on its fixed batches before and after the 2 epochs of
# `test_each_task_model_fits_with_plain_fit_on_tfds_data` (seed 0): a change to a model's
# initial draws, loss, train step or data moves them, and the seeds committed before it no
# longer describe today's code. Such a change goes into compgen_tf/resources/
# numerics_changes.json (what the report's stale marks read); then this file is written
# again with FINGERPRINT_COMMAND.
FINGERPRINTS = Path(__file__).parent / "fixtures" / "numerics_fingerprints.json"
WRITE_FINGERPRINTS = "COMPGEN_TF_WRITE_FINGERPRINTS"
FINGERPRINT_COMMAND = (f"{WRITE_FINGERPRINTS}=1 python -m pytest tests/test_registry.py "
                       "-k fits_with_plain_fit  (one process, no -n)")
# Relative tolerance of the comparison. Measured on this CPU (2026-12-02): one TensorFlow
# thread (as `make test` runs) gives the default's losses bit for bit, oneDNN off
# (TF_ENABLE_ONEDNN_OPTS=0, other kernels) moves them by at most 1.0e-7. A planted change
# of one initializer (seq2seq's source embedding drawn from N(0, 0.05) instead of Keras'
# uniform) moved the untrained loss by 4.7e-4 only, since an untrained loss sits near
# ln(vocabulary) whatever the draws: 1e-5 catches that with room to spare and still leaves
# 100 times the measured kernel noise for another CPU's kernels.
FINGERPRINT_RTOL = 1e-5


def check_fingerprint(name, untrained, trained, path=FINGERPRINTS):
    """Compares `name`'s two losses with the committed fingerprints, or with
    COMPGEN_TF_WRITE_FINGERPRINTS=1 set writes them there instead."""
    recorded = json.loads(path.read_text()) if path.exists() else {}
    measured = {"untrained_loss": float(untrained), "trained_loss": float(trained)}
    if os.environ.get(WRITE_FINGERPRINTS) == "1":
        recorded[name] = measured
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(json.dumps(dict(sorted(recorded.items())), indent=2) + "\n")
        os.replace(partial, path)
        return
    advice = ("if intended, add an entry to compgen_tf/resources/numerics_changes.json (the "
              "seeds committed before it are then marked stale) and regenerate the fixture: "
              f"{FINGERPRINT_COMMAND}")
    assert name in recorded, f"no numerics fingerprint of {name} in {path}; {advice}"
    for key, value in measured.items():
        expected = recorded[name][key]
        assert abs(value - expected) <= FINGERPRINT_RTOL * abs(expected), (
            f"numerics of {name} changed: {key} {value!r}, fingerprint {expected!r} "
            f"(rtol {FINGERPRINT_RTOL}); {advice}")


def test_every_model_is_registered_once_with_its_tasks():
    assert {n for n, s in registry.MODELS.items() if s.trains_on == "scan"} == set(
        registry.SCAN_MODELS)
    assert {experiment_for(s).kind for s in registry.MODELS.values()} == {"scan", "episodes",
                                                                          "toy"}
    assert all(experiment_for(s).kind == s.trains_on for s in registry.MODELS.values())
    assert registry.MODELS["syntactic_attention"].tasks == tuple(tfds_scan.CONFIG_NAMES) + tuple(
        tfds_scan.MT_CONFIG_NAMES) + tuple(tfds_scan.COGS_CONFIG_NAMES)
    assert registry.MODELS["equivariant_seq2seq"].tasks == tuple(tfds_scan.CONFIG_NAMES)
    assert registry.MODELS["counting_seq2seq"].tasks == tuple(tfds_scan.CONFIG_NAMES)
    # The Transformer trains on COGS (and on a folder) but not on the English-French set.
    assert registry.MODELS["transformer"].tasks == tuple(tfds_scan.CONFIG_NAMES) + tuple(
        tfds_scan.COGS_CONFIG_NAMES)
    assert registry.MODELS["stack_lstm"].tasks == ("palindromes", "palindromes_depth")
    with pytest.raises(ValueError, match="unknown model 'lstm'; available: "):
        registry.build("lstm")
    with pytest.raises(ValueError, match="does not train on 'palindromes'"):
        registry.build("mlp_baseline", "palindromes")


@pytest.mark.parametrize("name", sorted(registry.MODELS))
def test_build_gives_a_task_model_with_a_functional_backbone(name, tmp_path, monkeypatch):
    task = registry.build(name, **TINY.get(name, {}))
    backbone = task.backbone
    spec = registry.MODELS[name]
    assert isinstance(task, spec.task_class)
    assert spec.backbone_class is None or isinstance(backbone, spec.backbone_class)
    assert isinstance(backbone, keras.Model) and backbone.inputs and backbone.outputs
    # Functional: the layers are wired between keras.Inputs, so summary() has shapes ...
    monkeypatch.setenv("COLUMNS", "250")  # the table is as wide as the console: no cropping
    lines = []
    backbone.summary(line_length=250, print_fn=lambda line, **_: lines.append(line))
    summary = "\n".join(lines)
    assert "Output Shape" in summary
    layers = [layer for layer in backbone.layers if not isinstance(layer, keras.layers.InputLayer)]
    assert len(layers) >= 2
    for layer in layers:
        assert layer.name in summary
    # ... and plot_model has a graph to draw.
    dot = keras.utils.model_to_dot(backbone, show_shapes=True)
    drawn = " ".join(str(node.get("label")) for node in dot.get_nodes())
    assert all(layer.name in drawn for layer in layers)
    if shutil.which("dot"):  # rendering needs Graphviz
        keras.utils.plot_model(backbone, to_file=tmp_path / "backbone.png", show_shapes=True)
        assert (tmp_path / "backbone.png").stat().st_size > 1000
    if isinstance(backbone, Backbone):
        # A backbone rebuilds from its config with the same graph.
        again = type(backbone).from_config(backbone.get_config())
        assert [w.shape for w in again.weights] == [w.shape for w in backbone.weights]


def _scan_dataset(task, data_dir):
    """16 add-jump training examples from the OfflineScan TFDS builder, as `fit` reads them."""
    examples = tfds_scan.load("addprim_jump", "train", data_dir=data_dir).take(16)
    return examples.batch(8).map(task.preprocessor.dataset_fn())


def _toy_dataset(name, task_name, data_dir):
    """A few examples of the toy task's TFDS builder, as (inputs, targets[, weights])."""
    from compgen_tf.models.symmetry.palindromes import palindrome_arrays
    from compgen_tf.experiments.toy import composition_arrays
    from tfds_scan.toy_palindromes import ToyPalindromesConfig

    if task_name == "rule_learning":
        builder = tfds_scan.ToyRuleLearning(data_dir=data_dir)
    elif task_name == "composition":
        builder = tfds_scan.ToyComposition(config="seed0", data_dir=data_dir)
    else:
        builder = tfds_scan.ToyPalindromes(
            config=ToyPalindromesConfig(name="tiny", train_size=40, test_size=4),
            data_dir=data_dir)
    builder.download_and_prepare()
    rows = list(tfds.as_numpy(builder.as_dataset(split="train").take(16)))
    if task_name == "rule_learning":
        arrays = (np.stack([r["array"] for r in rows]), np.array([r["label"] for r in rows]))
    elif task_name == "composition":
        arrays = composition_arrays([(r["commands"].decode(), r["actions"].decode())
                                     for r in rows])[:2]
    else:
        arrays = palindrome_arrays([r["text"].decode() for r in rows])
    return tf.data.Dataset.from_tensor_slices(arrays).batch(8)


def _expected_loss(task, source, target):
    """(summed loss, tokens) of a SCAN batch, worked out here: the token cross-entropy, and
    with a (trainable) length head the `<eos>` targets left out and the head's squared error
    on each command's number of actions added."""
    from compgen_tf.models.losses import token_cross_entropy
    from compgen_tf.tokens import EOS_ID, PAD_ID

    logits = task.compute_logits(source, target)
    if task.length_head_args is None:
        return token_cross_entropy(target, logits)
    actions = tf.logical_and(tf.not_equal(target, PAD_ID), tf.not_equal(target, EOS_ID))
    summed, tokens = token_cross_entropy(tf.where(actions, target, PAD_ID), logits)
    lengths = tf.reduce_sum(tf.cast(actions, tf.float32), axis=1)
    squared = tf.reduce_sum(tf.square(task.length_head(source) - lengths))
    return summed + task.length_head_args["loss_weight"] * squared, tokens


@pytest.mark.parametrize("name", sorted(registry.MODELS))
def test_each_task_model_fits_with_plain_fit_on_tfds_data(name, tmp_path):
    keras.utils.set_random_seed(0)
    spec = registry.MODELS[name]
    task = registry.build(name, **TINY.get(name, {}))
    if spec.trains_on == "scan":
        dataset = _scan_dataset(task, tmp_path)
        task.compile(optimizer=keras.optimizers.Adam(0.01), clip_norm=5.0)
    elif spec.trains_on == "episodes":
        from compgen_tf.experiments.episodes import EpisodeBatches
        from compgen_tf.training.batches import training_dataset

        dataset = training_dataset(EpisodeBatches(task, spec.tasks[0], seed=0), 0).take(2)
        task.compile(optimizer=keras.optimizers.Adam(0.01), clip_norm=50.0)
    else:
        assert isinstance(task, ToyTask)
        dataset = _toy_dataset(name, spec.tasks[0], tmp_path)
    # The loss on these (fixed) batches before any update.
    untrained = task.evaluate(dataset, verbose=0, return_dict=True)["loss"]
    before = [w.numpy() for w in task.trainable_weights]
    history = task.fit(dataset, epochs=2, verbose=0)
    assert np.all(np.isfinite(history.history["loss"]))
    # Every trainable weight gets a gradient and an update (none is cut off the loss) ...
    still = [w.path for b, w in zip(before, task.trainable_weights)
             if np.array_equal(b, w.numpy())]
    assert before and not still, still
    # ... that lowers the loss: the second epoch's mean below the first's, and the loss on
    # the same batches by at least LOSS_DROP (half the drop measured).
    first_epoch, second_epoch = history.history["loss"]
    assert second_epoch < first_epoch
    # evaluate and predict are Keras' too; evaluate gives the loss per target token.
    loss = task.evaluate(dataset, verbose=0, return_dict=True)["loss"]
    assert np.isfinite(loss)
    assert loss <= untrained * (1 - LOSS_DROP[name]), (untrained, loss)
    check_fingerprint(name, untrained, loss)
    if spec.trains_on == "scan":
        totals = [_expected_loss(task, source, target) for source, target in dataset]
        expected = sum(float(t[0]) for t in totals) / sum(float(t[1]) for t in totals)
        np.testing.assert_allclose(loss, expected, rtol=1e-5)
    batch = next(iter(dataset))
    predicted = task.predict(dataset.take(1), verbose=0)
    if spec.trains_on == "scan":
        np.testing.assert_array_equal(predicted, task.greedy_decode(batch[0]).numpy())
    elif spec.trains_on == "episodes":
        np.testing.assert_array_equal(predicted, task.greedy_decode_episode(*batch[:3])[0])
    else:
        assert predicted.shape[0] == batch[0].shape[0]
