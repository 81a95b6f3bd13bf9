"""`train --strategy`: mirrored and multi-worker training change the weights as one device does.

Strategies need TensorFlow unconfigured (logical CPU devices, TF_CONFIG), so every run here is
a separate `python -m compgen_tf.train` process, as a user would start it.
"""

import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from compgen_tf.training.distribute import StrategyError, make_strategy
from compgen_tf.training.batches import pad_to_replicas
from compgen_tf.models.losses import masked_cross_entropy
from compgen_tf.tokens import EOS_ID, PAD_ID

ROOT = Path(__file__).resolve().parents[1]
# Deterministic settings (no dropout, full teacher forcing) so that runs can be compared
# weight for weight; a small clip norm makes sure clipping is active at every step, and an
# odd batch size makes the trainer pad the global batch for two replicas.
TINY_RUN = ["--model", "seq2seq", "--split", "simple", "--steps", "6", "--quiet",
            "--set", "model_args.embedding_dim=8", "--set", "model_args.hidden_units=8",
            "--set", "model_args.dropout=0.0", "--set", "training.teacher_forcing_ratio=1.0",
            "--set", "training.batch_size=15", "--set", "training.eval_every=6",
            "--set", "training.clip_norm=0.05",
            # Six steps emit no <eos>: short decodes, and validation is the only split scored
            # (what is compared is the weights).
            "--set", "model_args.max_output_length=8", "--evaluate-splits", "validation"]


def _train(output, *extra, env=None, wait=True):
    command = [sys.executable, "-m", "compgen_tf.train", *TINY_RUN, "--output", str(output),
               *extra]
    environment = dict(os.environ, **(env or {}))
    process = subprocess.Popen(command, cwd=ROOT, env=environment, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    return _finish(process) if wait else process


def _finish(process, timeout=300):
    output, _ = process.communicate(timeout=timeout)
    return process.returncode, output


def _weights(run_dir):
    import keras

    import compgen_tf.models  # noqa: F401  (registers the model classes)
    return [w.numpy() for w in keras.saving.load_model(Path(run_dir) / "best_model.keras").weights]


def _initial_weights(run_dir):
    """The weights the run started from (train_run seeds, then builds the model)."""
    import keras

    from compgen_tf import registry

    config = json.loads((Path(run_dir) / "config.json").read_text())
    keras.utils.set_random_seed(config["seed"])
    words = [json.loads((Path(run_dir) / f"{side}_vocabulary.json").read_text())["words"]
             for side in ("source", "target")]
    model = registry.build_model(config["model"], config["model_args"], *words)
    model.build()
    return [w.numpy() for w in model.weights]


def _max_difference(a, b):
    assert len(a) == len(b)
    return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b))


@pytest.fixture(scope="module")
def single_device_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("single") / "run"
    code, output = _train(run_dir)
    assert code == 0, output
    return run_dir


def _free_ports(count):
    sockets = [socket.socket() for _ in range(count)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def test_pad_to_replicas_adds_empty_examples_that_change_no_loss():
    source = np.array([[5, 6, EOS_ID], [7, EOS_ID, PAD_ID], [5, EOS_ID, PAD_ID]], np.int32)
    target = np.array([[4, 5, EOS_ID], [4, EOS_ID, PAD_ID], [5, EOS_ID, PAD_ID]], np.int32)
    padded_source, padded_target = pad_to_replicas(source, target, 2)
    np.testing.assert_array_equal(padded_source[3], [EOS_ID, PAD_ID, PAD_ID])
    np.testing.assert_array_equal(padded_target[3], [PAD_ID] * 3)
    np.testing.assert_array_equal(padded_source[:3], source)
    assert pad_to_replicas(source, target, 3)[0] is source  # already a multiple

    logits = tf.random.stateless_normal([4, 3, 8], seed=[1, 2])
    whole = masked_cross_entropy(padded_target, logits)
    np.testing.assert_allclose(float(whole), float(masked_cross_entropy(target, logits[:3])),
                               rtol=1e-6)
    # Two replicas' halves, each over the global token count, add up to the whole batch.
    tokens = int(np.sum(padded_target != PAD_ID))
    halves = sum(float(masked_cross_entropy(padded_target[i:i + 2], logits[i:i + 2], tokens))
                 for i in (0, 2))
    np.testing.assert_allclose(halves, float(whole), rtol=1e-6)


def test_mirrored_over_two_cpu_devices_matches_one_device(single_device_run, tmp_path):
    code, output = _train(tmp_path / "mirrored", "--strategy", "mirrored", "--cpu-devices", "2")
    assert code == 0, output
    reference = _weights(single_device_run)
    assert _max_difference(reference, _weights(tmp_path / "mirrored")) < 1e-5
    # The comparison means something only if the six steps moved the weights.
    assert _max_difference(reference, _initial_weights(single_device_run)) > 1e-3


def test_multi_worker_on_two_local_workers_matches_one_device(single_device_run, tmp_path):
    ports = _free_ports(2)
    cluster = {"worker": [f"127.0.0.1:{port}" for port in ports]}
    run_dir = tmp_path / "multi_worker"
    workers = [
        _train(run_dir, "--strategy", "multi_worker", wait=False,
               env={"TF_CONFIG": json.dumps({"cluster": cluster,
                                             "task": {"type": "worker", "index": index}})})
        for index in (0, 1)]
    (chief_code, chief_output), (worker_code, worker_output) = [_finish(w) for w in workers]
    assert chief_code == 0, chief_output
    assert worker_code == 0, worker_output
    assert "worker 1 done" in worker_output
    assert "validation 0.0000" in chief_output and "test exact match" not in chief_output
    assert set(json.loads((run_dir / "metrics.json").read_text())["accuracy"]) == {"validation"}
    # Only the chief leaves files: the other worker's checkpoints are gone once it is done.
    assert not (run_dir / ".worker1").exists()
    assert json.loads((run_dir / "metrics.json").read_text())["steps"] == 6
    assert _max_difference(_weights(single_device_run), _weights(run_dir)) < 1e-5


@pytest.mark.parametrize("name, cpu_devices, tf_config, message", [
    ("multi_worker", None, None, "needs the TF_CONFIG"),
    ("multi_worker", None, '{"cluster": {}}', "not a valid cluster"),
    ("multi_worker", None, '{"cluster": {"worker": ["127.0.0.1:1"]}, '
                           '"task": {"type": "worker", "index": 3}}', "index in [0, 1)"),
    ("default", 2, None, "mirrored strategy only"),
    ("mirrored", 0, None, "cpu_devices must be >= 1"),
    ("parameter_server", None, None, "unknown strategy"),
])
def test_bad_strategy_settings_are_clear_errors(monkeypatch, name, cpu_devices, tf_config,
                                                message):
    if tf_config is None:
        monkeypatch.delenv("TF_CONFIG", raising=False)
    else:
        monkeypatch.setenv("TF_CONFIG", tf_config)
    with pytest.raises(StrategyError, match=re.escape(message)):
        make_strategy(name, cpu_devices)


def test_train_reports_a_bad_strategy_setting_and_exits_2(tmp_path):
    code, output = _train(tmp_path / "run", "--strategy", "multi_worker",
                          env={"TF_CONFIG": ""})
    assert code == 2
    assert "error: the multi_worker strategy needs the TF_CONFIG" in output
    assert not (tmp_path / "run").exists()


DROPOUT_STREAMS = """
import json, sys
import tensorflow as tf
from compgen_tf.training.distribute import make_strategy, separate_dropout_streams
strategy = make_strategy("mirrored", cpu_devices=2)
import keras
with strategy.scope():
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dropout(0.5)])
draw = tf.function(lambda: strategy.run(lambda: model(tf.ones([1, 64]), training=True)))
masks = lambda: [(v.numpy() > 0).astype(int).ravel().tolist() for v in draw().values]
result = {"shared": masks()}
separate_dropout_streams(strategy, model, restored=False)
result["separate"] = masks()
checkpoint = tf.train.Checkpoint(states=[v.value for v in model.non_trainable_variables])
path = checkpoint.save(sys.argv[1])
result["continued"] = [masks(), masks()]
checkpoint.restore(path)
separate_dropout_streams(strategy, model, restored=True)
result["resumed"] = [masks(), masks()]
print(json.dumps(result))
"""


def test_replicas_draw_their_own_dropout_masks_also_after_a_restore(tmp_path):
    completed = subprocess.run([sys.executable, "-c", DROPOUT_STREAMS, str(tmp_path / "ckpt")],
                               cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    first, second = result["shared"]
    assert first == second  # what Keras does under a strategy on its own
    first, second = result["separate"]
    assert first != second
    assert result["resumed"] == result["continued"]
    assert result["continued"][0][0] != result["continued"][0][1]
