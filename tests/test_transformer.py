"""The Transformer task model (`--model transformer`): cached greedy decoding equals
decoding without the cache, its options, label smoothing and the warm-up schedule, a tiny
one learning a toy split, export with per-row errors and the `train` command.

Its layers are tested on every backend in tests/test_transformer_layers.py.
"""

import json
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import tfds_scan
from compgen_tf import registry
from compgen_tf.analysis import export_check
from compgen_tf.models.export import export_model
from compgen_tf.models.losses import token_cross_entropy
from compgen_tf.models.preprocessor import vocabulary_words
from compgen_tf.models.transformer.transformer_seq2seq import TransformerSeq2Seq
from compgen_tf.tokens import EOS_ID, PAD_ID
from compgen_tf.training.schedules import LinearWarmup
from compgen_tf.training.settings import TrainingConfig

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(width=16, num_layers=2, num_heads=2, feedforward_dim=32, dropout=0.0,
            max_relative_distance=3)
VARIANTS = [dict(positions="sinusoidal"), dict(positions="learned"),
            dict(positions="relative"), dict(positions="relative", universal=True)]


def variant_id(variant):
    return "-".join(f"{v}" if k == "positions" else k for k, v in variant.items())


def uncached_greedy(model, source_ids, steps):
    """Greedy decoding with no cache: the whole teacher-forced decoder again at every step,
    on the tokens chosen so far, its last position's argmax taken."""
    memory = model.backbone.encode(tf.constant(source_ids))
    chosen = np.zeros((len(source_ids), 0), "int32")
    logits_by_step = []
    for _ in range(steps):
        targets = np.concatenate([chosen, np.zeros((len(source_ids), 1), "int32")], 1)
        logits = model.backbone.decoder(tf.constant(targets), memory).numpy()[:, -1]
        logits_by_step.append(logits)
        chosen = np.concatenate([chosen, logits.argmax(-1).astype("int32")[:, None]], 1)
    return chosen, np.stack(logits_by_step, 1)


@pytest.mark.parametrize("segment", [None, 2, 4], ids=lambda s: f"segment{s}")
@pytest.mark.parametrize("variant", VARIANTS, ids=variant_id)
def test_cached_greedy_decoding_is_uncached_decoding(variant, segment):
    """Also when the cache grows between loops of `segment` steps (`greedy_segment`)."""
    keras.utils.set_random_seed(0)
    model = registry.build("transformer", max_output_length=9, **TINY, **variant)
    model.backbone.decoder.greedy_segment = segment
    for weight in model.backbone.weights:  # far from the initial draws: decisive logits
        weight.assign(np.random.default_rng(1).normal(scale=0.5, size=weight.shape))
    source_ids = np.array([[5, 6, 7, 3, 0], [8, 3, 0, 0, 0], [6, 5, 9, 10, 3]], "int32")
    ids, attention = (t.numpy() for t in model.greedy_decode_with_attention(source_ids, 9))
    expected, logits = uncached_greedy(model, source_ids, 9)
    # Rows keep decoding past their <eos> in the uncached loop; the sampler writes <pad>.
    finished = np.cumsum(expected == EOS_ID, axis=1) - (expected == EOS_ID) > 0
    np.testing.assert_array_equal(ids, np.where(finished, PAD_ID, expected))
    assert not finished[:, 5].all(), "a row must decode past the first loops"
    if segment is not None:
        # The attention of one loop of 9 steps, to float rounding.
        model.backbone.decoder.greedy_segment = None
        whole = model.backbone.decoder.greedy(model.backbone.encode(tf.constant(source_ids)), 9)
        np.testing.assert_array_equal(whole[0].numpy(), ids)
        np.testing.assert_allclose(whole[1].numpy(), attention, rtol=0, atol=1e-6)
        return
    # And the step's logits are the teacher-forced ones (the sampler's own argmax aside).
    decoder = model.backbone.decoder
    memory = model.backbone.encode(tf.constant(source_ids))
    state = decoder.greedy_state(memory, None, 9)
    constants = decoder.prepare(memory)
    previous = tf.fill([3], 2)
    for t in range(9):
        step_logits, state, attention = decoder.step(previous, state, memory, constants)
        np.testing.assert_allclose(step_logits.numpy(), logits[:, t], rtol=0, atol=1e-4)
        previous = tf.constant(expected[:, t])
    assert attention.shape == (3, 5)


def test_a_step_reads_the_cache_rather_than_recomputing_the_prefix():
    """Step t's output depends on the earlier positions only through the cache: a cache
    whose entries are changed changes the step, the earlier tokens alone do not."""
    model = registry.build("transformer", max_output_length=4, **TINY)
    decoder = model.backbone.decoder
    memory = model.backbone.encode(tf.constant([[5, 6, 3]], tf.int32))
    constants = decoder.prepare(memory)
    state = decoder.greedy_state(memory, None, 4)
    _, state, _ = decoder.step(tf.constant([2]), state, memory, constants)
    logits, _, _ = decoder.step(tf.constant([5]), state, memory, constants)
    position, caches = state
    emptied = (position, tuple((tf.zeros_like(k), tf.zeros_like(v)) for k, v in caches))
    changed, _, _ = decoder.step(tf.constant([5]), emptied, memory, constants)
    assert not np.allclose(logits.numpy(), changed.numpy())


def test_options_are_checked():
    with pytest.raises(ValueError, match="positions must be one of"):
        registry.build("transformer", positions="rotary")
    with pytest.raises(ValueError, match="max_positions >= 64"):
        registry.build("transformer", positions="learned", max_positions=16, width=8,
                       num_heads=2)
    model = registry.build("transformer", **TINY)
    with pytest.raises(ValueError, match="teacher_forcing_ratio must be 1"):
        model.compile(optimizer="adam", teacher_forcing_ratio=0.5)


def test_universal_layers_share_their_weights():
    separate = registry.build("transformer", **{**TINY, "num_layers": 3})
    shared = registry.build("transformer", **{**TINY, "num_layers": 3, "universal": True})
    one = registry.build("transformer", **{**TINY, "num_layers": 1})
    assert shared.count_params() == one.count_params() < separate.count_params()
    assert len(shared.backbone.decoder.applications) == 3


def test_label_smoothing_is_the_smoothed_target_over_the_tokens_that_can_be_emitted():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 3, 6)).astype("float32")
    logits[..., :3] = -1e9  # <pad>, <unk>, <sos>: blocked, as the decoders do
    targets = np.array([[4, 3, 0], [5, 4, 3]], "int32")
    summed, count = token_cross_entropy(targets, logits, label_smoothing=0.1)
    log_p = logits[..., 3:] - np.log(np.exp(logits[..., 3:]).sum(-1, keepdims=True))
    expected = 0.0
    for b, t in zip(*np.nonzero(targets)):
        smoothed = np.full(3, 0.1 / 3)
        smoothed[targets[b, t] - 3] += 0.9
        expected -= smoothed @ log_p[b, t]
    assert float(count) == 5
    np.testing.assert_allclose(float(summed), expected, rtol=1e-5)
    # Without smoothing: the plain cross-entropy, as before.
    plain, _ = token_cross_entropy(targets, logits)
    np.testing.assert_allclose(float(plain), -sum(log_p[b, t, targets[b, t] - 3]
                                                  for b, t in zip(*np.nonzero(targets))),
                               rtol=1e-5)


def test_label_smoothing_and_warm_up_are_training_settings():
    settings = TrainingConfig.from_section({"learning_rate": 1e-3, "warmup_steps": 4,
                                            "label_smoothing": 0.1})
    schedule = settings.learning_rate_schedule()
    assert isinstance(schedule, LinearWarmup)
    np.testing.assert_allclose([float(schedule(s)) for s in (0, 1, 3, 100)],
                               [2.5e-4, 5e-4, 1e-3, 1e-3], rtol=1e-6)
    decayed = TrainingConfig.from_section({"learning_rate": 1e-3, "warmup_steps": 2,
                                           "learning_rate_decay_steps": 10,
                                           "learning_rate_decay_factor": 0.5})
    np.testing.assert_allclose(float(decayed.learning_rate_schedule()(20)), 2.5e-4, rtol=1e-6)
    again = LinearWarmup.from_config(decayed.learning_rate_schedule().get_config())
    np.testing.assert_allclose(float(again(20)), 2.5e-4, rtol=1e-6)
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        TrainingConfig.from_section({"label_smoothing": 1.0})
    with pytest.raises(ValueError, match="warmup_steps must be >= 0"):
        TrainingConfig.from_section({"warmup_steps": -1})


def test_tiny_transformer_learns_short_scan_commands(tmp_path):
    """A 1-layer relative Transformer fits SCAN's commands of up to three words."""
    from compgen_tf.training.callbacks import BEST_MODEL
    from compgen_tf.training.data import encode_split
    from compgen_tf.training.fit import fit_split

    examples = [(c, tfds_scan.interpret(c)) for c in tfds_scan.all_commands()
                if len(c.split()) <= 3]
    keras.utils.set_random_seed(0)
    model = TransformerSeq2Seq.from_words(
        vocabulary_words(c for c, _ in examples), vocabulary_words(a for _, a in examples),
        width=32, num_layers=1, num_heads=4, feedforward_dim=64, dropout=0.0,
        positions="relative", max_relative_distance=4, max_output_length=12)
    split = encode_split(model, examples)
    settings = {"batch_size": 32, "learning_rate": 3e-3, "clip_norm": 5.0, "max_steps": 400,
                "eval_every": 50, "checkpoint_every": 1000, "patience": 100,
                "stop_at_accuracy": 1.0, "warmup_steps": 20, "label_smoothing": 0.05}
    summary = fit_split(model, settings, tmp_path, split, split, seed=1, verbose=0)
    assert summary["best_val_accuracy"] >= 0.95, summary
    best = keras.saving.load_model(tmp_path / BEST_MODEL)
    translated = best.translate([c for c, _ in examples])
    assert np.mean([t == a for t, (_, a) in zip(translated, examples)]) >= 0.95


def test_export_answers_bad_rows_with_errors_and_agrees_with_translate(tmp_path):
    keras.utils.set_random_seed(0)
    model = registry.build("transformer", max_output_length=6, positions="relative",
                           **{k: v for k, v in TINY.items()})
    export_dir = export_model(model, tmp_path / "1")
    signature = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    commands = ["jump twice", "fly", "", "walk left and jump", "jump jump"]
    actions, errors = export_check.translate_through(signature, commands, batch=5)
    assert errors[1] and "fly" in errors[1] and errors[2] and errors[4], errors
    assert actions[1] == actions[2] == actions[4] == ""
    good = [commands[0], commands[3]]
    assert model.translate(good, return_errors=True) == ([actions[0], actions[3]],
                                                         [errors[0], errors[3]])
    # The .keras file of the task reloads with the same translations.
    model.save(tmp_path / "model.keras")
    assert keras.saving.load_model(tmp_path / "model.keras").translate(good) == model.translate(
        good)


def test_the_train_command_trains_a_tiny_transformer_on_simple(tmp_path):
    sets = ["model_args.width=16", "model_args.num_layers=1", "model_args.num_heads=2",
            "model_args.feedforward_dim=16", "model_args.max_output_length=4",
            "training.batch_size=16", "training.eval_every=2", "training.checkpoint_every=2",
            "data.validation_fraction=0.01"]
    result = subprocess.run(
        [sys.executable, "-m", "compgen_tf", "train", "--model", "transformer", "--split",
         "simple", "--steps", "2", "--output", str(tmp_path / "run"), "--evaluate-splits",
         "validation", "--quiet", *[a for s in sets for a in ("--set", s)]],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert metrics["model"] == "transformer" and metrics["steps"] == 2
    assert set(metrics["accuracy"]) == {"validation"}
