import json

import keras
import numpy as np
import pytest

import tfds_scan
from compgen_tf.data import encode_split, epoch_batches, gather_batch
from compgen_tf.models import AttentionSeq2Seq
from compgen_tf.trainer import BEST_MODEL, Trainer, learning_rate_schedule
from compgen_tf.vocabulary import Vocabulary

# A small slice of SCAN: the commands of at most 3 words.
EXAMPLES = [(c, tfds_scan.interpret(c)) for c in tfds_scan.all_commands() if len(c.split()) <= 3]
TRAINING = {"batch_size": 16, "learning_rate": 0.01, "clip_norm": 5.0,
            "teacher_forcing_ratio": 0.5, "eval_every": 5, "checkpoint_every": 5,
            "patience": 100}


def make_model():
    keras.utils.set_random_seed(0)
    source = Vocabulary.from_texts(c for c, _ in EXAMPLES)
    target = Vocabulary.from_texts(a for _, a in EXAMPLES)
    return AttentionSeq2Seq(source.words, target.words, embedding_dim=16, hidden_units=16,
                            dropout=0.1, max_output_length=12)


def make_trainer(run_dir, max_steps, **overrides):
    model = make_model()
    split = encode_split(model, EXAMPLES)
    settings = dict(TRAINING, max_steps=max_steps, **overrides)
    return Trainer(model, settings, run_dir, split, split, seed=3, verbose=0)


def test_epoch_batches_cover_every_example_once_and_are_deterministic():
    model = make_model()
    split = encode_split(model, EXAMPLES)
    batches = epoch_batches(split, 7, seed=1, epoch=0)
    indices = np.concatenate(batches)
    assert sorted(indices) == list(range(len(EXAMPLES)))
    again = epoch_batches(split, 7, seed=1, epoch=0)
    assert all(np.array_equal(a, b) for a, b in zip(batches, again))
    assert not all(np.array_equal(a, b)
                   for a, b in zip(batches, epoch_batches(split, 7, seed=1, epoch=1)))
    source, target = gather_batch(split, batches[0], length_bucket=8)
    assert target.shape[1] % 8 == 0 or target.shape[1] == split.target_ids.shape[1]


def test_interrupted_training_resumes_exactly(tmp_path):
    straight = make_trainer(tmp_path / "straight", max_steps=20)
    straight.fit()

    interrupted = make_trainer(tmp_path / "interrupted", max_steps=20)
    real_step = interrupted._train_step
    calls = []

    def dying_step(*args):
        calls.append(1)
        if len(calls) > 12:  # the last checkpoint is at step 10
            raise KeyboardInterrupt
        return real_step(*args)

    interrupted._train_step = dying_step
    with pytest.raises(KeyboardInterrupt):
        interrupted.fit()
    resumed = make_trainer(tmp_path / "interrupted", max_steps=20)
    assert resumed.restore() and resumed.step == 10
    summary = resumed.fit()
    assert summary["steps"] == 20
    for a, b in zip(straight.model.weights, resumed.model.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6, err_msg=a.path)
    history = [json.loads(line) for line in (tmp_path / "straight/history.jsonl").open()]
    assert [h["step"] for h in history] == [5, 10, 15, 20]


def test_tiny_run_learns_training_set_and_keeps_best_model(tmp_path):
    trainer = make_trainer(tmp_path, max_steps=600, eval_every=50, stop_at_accuracy=1.0,
                           learning_rate=0.01)
    summary = trainer.fit()
    assert summary["best_val_accuracy"] == 1.0, summary
    assert summary["steps"] < 600  # stopped as soon as validation was perfect
    best = keras.saving.load_model(tmp_path / BEST_MODEL)
    commands = [c for c, _ in EXAMPLES]
    assert best.translate(commands) == [a for _, a in EXAMPLES]


def test_learning_rate_schedule_is_constant_or_halves_stepwise():
    assert learning_rate_schedule({"learning_rate": 0.01}) == 0.01
    schedule = learning_rate_schedule({"learning_rate": 0.01, "learning_rate_decay_steps": 1000,
                                       "learning_rate_decay_factor": 0.5})
    rates = [float(schedule(step)) for step in (0, 999, 1000, 2500)]
    np.testing.assert_allclose(rates, [0.01, 0.01, 0.005, 0.0025], rtol=1e-6)
