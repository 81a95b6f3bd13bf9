"""The library's training path on JAX: `train --backend jax`, exact resume, and the same
losses as on TensorFlow from the same weights.

Each JAX side runs in a process of its own (the suite's is TensorFlow), skipped where JAX is
not installed (the `backends` extra).
"""

import json
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest
import tensorflow as tf

import jax_families_worker
import training_worker
from compgen_tf import names, registry
from compgen_tf.analysis.resume_check import SMALL_MODEL
from compgen_tf.cli import main as command
from compgen_tf.models.preprocessor import vocabulary_words
from test_backends import needs, run_on

ROOT = Path(__file__).resolve().parents[1]
pytestmark = needs("jax")


def test_a_run_on_jax_repeats_and_resumes_after_a_kill_to_the_last_bit(tmp_path):
    # The paper's regime (batch 1, dropout 0.5, no clipping): dropout's draws, the data
    # order and the optimizer state must all come back from the checkpoint.
    config = tmp_path / "paper_regime.json"
    config.write_text(json.dumps({
        "base": str(ROOT / "configs" / "syntactic_attention" / "paper_regime.json"),
        "training": {"jit_compile": False, "unroll": False}}))
    out = tmp_path / "resume.json"
    run_on("jax", ["tools/check_resume_exact.py", "--config", str(config), "--steps", "12",
                   "--out", str(out)])
    result = json.loads(out.read_text())
    assert result["stopped_after"] == 7 and result["checkpoint_every"] == 2
    assert result["largest_weight_difference"] == {"straight_vs_repeat": 0.0,
                                                   "straight_vs_resumed": 0.0}
    straight = result["losses"]["straight"]
    assert [step for step, _ in straight] == [4, 8, 12]
    assert result["losses"]["repeat"] == straight == result["losses"]["resumed"]


# Each SCAN family's short run from the same saved weights, dropout off (its masks are each
# backend's own draws): (model, its small model_args). resume_check's small Syntactic
# Attention; counting_seq2seq fits its length head first, as its runs do.
SCAN_FAMILIES = {
    "syntactic_attention": dict(SMALL_MODEL, dropout=0.0),
    "seq2seq": {"hidden_units": 8, "embedding_dim": 8, "max_output_length": 12,
                "dropout": 0.0},
    "equivariant_seq2seq": {"hidden_units": 8, "embedding_dim": 8, "max_output_length": 12},
    "counting_seq2seq": {"hidden_units": 8, "embedding_dim": 8, "max_output_length": 12,
                         "dropout": 0.0},
    "transformer": {"width": 16, "num_layers": 1, "num_heads": 2, "feedforward_dim": 16,
                    "max_output_length": 12, "dropout": 0.0},
}
LENGTH_HEAD_STEPS = 4


def jobs_for(backend, models, folder):
    """The worker's jobs on `backend` (tests/training_worker.py) and each job's output."""
    jobs = {}
    for family, model in models.items():
        jobs[family] = {"model": str(model), "length_head_steps":
                        LENGTH_HEAD_STEPS if family == "counting_seq2seq" else 0}
    if backend == "jax":
        jobs["syntactic_attention_unrolled"] = {"model": str(models["syntactic_attention"]),
                                                "unroll": True}
        # Twice with some rows fed their own outputs (the draws must repeat), and forced.
        for name in ("seq2seq_tf0.5_first", "seq2seq_tf0.5_again"):
            jobs[name] = {"model": str(models["seq2seq"]), "teacher_forcing": 0.5}
    for name, job in jobs.items():
        job.update(run_dir=str(folder / backend / name), out=str(folder / f"{backend}_{name}.npz"))
    return jobs


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """{backend: {job: arrays}}: every job of `jobs_for`, TensorFlow's in this process,
    JAX's in a worker process."""
    folder = tmp_path_factory.mktemp("equivalence")
    pairs = training_worker.examples()
    words = (vocabulary_words(c for c, _ in pairs), vocabulary_words(a for _, a in pairs))
    models = {}
    for family, model_args in SCAN_FAMILIES.items():
        keras.utils.set_random_seed(0)
        models[family] = folder / f"{family}.keras"
        registry.build_model(family, model_args, *words).save(models[family])
    results = {}
    for backend in ("tensorflow", "jax"):
        jobs = jobs_for(backend, models, folder)
        (folder / f"{backend}_jobs.json").write_text(json.dumps(list(jobs.values())))
        if backend == "tensorflow":  # the suite's own backend: no second import of it
            training_worker.main(folder / f"{backend}_jobs.json")
        else:
            run_on(backend, ["tests/training_worker.py", str(folder / f"{backend}_jobs.json")],
                   timeout=900)
        results[backend] = {}
        for name, job in jobs.items():
            with np.load(job["out"]) as arrays:
                results[backend][name] = {key: arrays[key] for key in arrays.files}
    return results


# float32 through two kernel libraries, 8 Adam steps at rate 0.01 with clipping: the same
# arithmetic up to rounding (measured on this CPU, 2026-12-04, the five families: losses
# within 2.6e-7 relative, weights within 8.6e-6, the transformer's; 1e-6 for the length
# head's 4 steps), with room for other kernels on other machines.
LOSS_TOLERANCE, WEIGHT_TOLERANCE = 1e-5, 1e-5


def assert_same_training(jax, tensorflow):
    assert len(tensorflow["losses"]) == len(jax["losses"]) == 8
    # Greedy decoding of the trained model: on JAX through a batch padded to (8, 8)
    # (`bucketed_ids`), the same ids as TensorFlow's unpadded one.
    assert tensorflow["decoded"].shape == (len(training_worker.DECODED),
                                           tensorflow["decoded"].shape[1])
    np.testing.assert_array_equal(jax["decoded"], tensorflow["decoded"])
    np.testing.assert_allclose(jax["losses"], tensorflow["losses"], rtol=LOSS_TOLERANCE)
    weights = [name for name in tensorflow if name.startswith("weight_")]
    assert weights and sorted(weights) == sorted(n for n in jax if n.startswith("weight_"))
    for name in weights:
        np.testing.assert_allclose(jax[name], tensorflow[name], atol=WEIGHT_TOLERANCE,
                                   err_msg=name)


@pytest.mark.parametrize("family", sorted(SCAN_FAMILIES))
def test_jax_and_tensorflow_train_the_same_losses_and_weights_from_the_same_model(
        trained, family):
    tensorflow, jax = trained["tensorflow"][family], trained["jax"][family]
    # The weights moved (the clipped updates train), and identically on both backends. The
    # loss falls in these 8 updates but for the counting model's (its decoder, trained
    # without `<eos>` targets, starts from a head fitted for only 4 updates).
    assert tensorflow["largest_change"] > 100 * WEIGHT_TOLERANCE
    if family != "counting_seq2seq":
        assert tensorflow["losses"][-1] < tensorflow["losses"][0] - 0.02
    assert_same_training(jax, tensorflow)
    if family == "counting_seq2seq":
        # Its length head was fitted first, on batches in the same order on both (Keras'
        # JAX trainer opens two iterators on a dataset, TensorFlow's one: a reshuffling
        # dataset fed the head other batches on JAX, 1.6e-3 apart in weight after 4 steps).
        assert np.isfinite(tensorflow["length_head_mse"])
        np.testing.assert_allclose(jax["length_head_mse"], tensorflow["length_head_mse"],
                                   rtol=LOSS_TOLERANCE)


def test_jax_trains_the_same_losses_with_the_recurrences_unrolled(trained):
    # `training.unroll` (the batch-1 regime's configs set it) on JAX: the recurrences written
    # out under the jitted step give TensorFlow's losses and weights.
    assert_same_training(trained["jax"]["syntactic_attention_unrolled"],
                         trained["tensorflow"]["syntactic_attention"])


def test_teacher_forcing_draws_on_jax_are_seeded_and_change_the_loss(trained):
    # Below ratio 1 some rows are fed their own outputs: drawn from (seed, step) on JAX's
    # generator, so a run repeats, and the loss differs from the teacher-forced one. The
    # LSTM baseline: Syntactic Attention's decoder does not read its previous output.
    jax = trained["jax"]
    first, again = jax["seq2seq_tf0.5_first"], jax["seq2seq_tf0.5_again"]
    np.testing.assert_array_equal(first["losses"], again["losses"])
    assert not np.allclose(first["losses"], jax["seq2seq"]["losses"])


@pytest.fixture(scope="module")
def family_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("families")
    run_on("jax", ["tests/jax_families_worker.py", str(out)], timeout=900)
    return out


def test_every_family_trains_on_jax_through_the_train_command(family_runs):
    trained = json.loads((family_runs / "trained.json").read_text())
    # Every registered model trains on JAX: the SCAN families in the equivalence above
    # (through `fit_split`); through the train command Syntactic Attention for them,
    # counting_seq2seq (its run fits the length head first) and every other model.
    assert {"syntactic_attention", "counting_seq2seq"} <= set(trained)
    assert not set(trained) & {"seq2seq", "equivariant_seq2seq", "transformer"}
    assert set(trained) | set(SCAN_FAMILIES) == set(names.MODELS)
    for family, record in trained.items():
        assert record == {"exit_code": 0, "backend": "jax", "steps": 2,
                          "checkpoints": ["ckpt-2.npz"], "loads": True, "jitted": True}, family
    run = family_runs / "syntactic_attention"
    assert [json.loads(line)["step"] for line in
            (run / "history.jsonl").read_text().splitlines()] == [2]


def test_a_jax_run_serves_from_tensorflow_and_tensorflow_refuses_to_resume_it(family_runs):
    run = family_runs / "syntactic_attention"
    # The run's kept model loads on TensorFlow, and its export answers each row as the
    # model translates it, a bad command with its own error.
    model = keras.saving.load_model(run / "best_model.keras")
    assert command(["export", "--run", str(run), "--out", str(family_runs / "export" / "1")]) == 0
    serve = tf.saved_model.load(str(family_runs / "export" / "1")).signatures["serving_default"]
    out = serve(commands=tf.constant(["jump twice", "jump wildly"]))
    actions = [a.decode() for a in out["actions"].numpy()]
    errors = [e.decode() for e in out["error"].numpy()]
    assert (actions[0], errors[0]) == tuple(x[0] for x in model.translate(["jump twice"],
                                                                           return_errors=True))
    assert actions[1] == "" and "unknown word(s):" in errors[1] and "wildly" in errors[1]
    # An unfinished JAX run is not continued on TensorFlow: one line, exit code 2.
    (run / "metrics.json").unlink()
    worker = jax_families_worker
    train = ["-m", "compgen_tf", "train", *worker.FAMILIES["syntactic_attention"],
             "--steps", str(worker.STEPS), *worker.EVERY, "--output", str(run), "--quiet",
             "--backend", "tensorflow"]
    refused = subprocess.run([sys.executable, *train], cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    assert refused.returncode == 2, refused.stderr[-2000:]
    assert "was trained on the jax backend" in refused.stderr.strip().splitlines()[-1]
