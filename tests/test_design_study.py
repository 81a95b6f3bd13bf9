"""`scripts/design_study_jax.py`: the dev-split study's second trainer (plain `fit`)."""

import importlib.util
import json

import numpy as np

spec = importlib.util.spec_from_file_location("study", "scripts/design_study_jax.py")
study = importlib.util.module_from_spec(spec)
spec.loader.exec_module(study)


def test_exact_match_compares_up_to_eos_and_ignores_what_follows():
    targets = np.array([[4, 5, 3, 0], [4, 3, 0, 0], [5, 3, 0, 0]])
    predicted = np.array([[4, 5, 3, 4], [4, 4, 3, 0], [5, 3, 5, 5]])
    logits = np.eye(6)[predicted]
    np.testing.assert_array_equal(study.exact_match(logits, targets), [True, False, True])
    # Cross-entropy over the 6 real tokens only: each is log(e + 5) - 1 for a one-hot logit.
    assert abs(study.masked_loss(logits, targets)
               - np.mean([np.log(np.e + 5) - (1 if p == t else 0)
                          for p, t in zip(predicted[targets > 0], targets[targets > 0])])) < 1e-6


def test_jobs_are_seed_major():
    jobs = study.jobs(["a", "b"], ["x"], range(2))
    assert [(j["seed"], j["candidate"]) for j in jobs] == [(0, "a"), (0, "b"), (1, "a"), (1, "b")]


def test_a_job_trains_validates_and_scores_its_best_weights(tmp_path):
    rng = np.random.default_rng(0)

    def rows(count, length, low, high):
        ids = rng.integers(low, high, (count, length)).astype("int32")
        ids[:, -1] = study.EOS_ID
        return ids

    arrays = {f"{part}_{side}": rows(n, length, 4, 8)
              for part, n in (("fit", 32), ("validation", 8), ("test", 8))
              for side, length in (("source", 5), ("target", 4))}
    np.savez(tmp_path / "toy.npz", **arrays)
    manifest = {"model_args": {"semantic_dim": 4, "syntax_embedding_dim": 4, "syntax_units": 4,
                               "encoder_units": 4, "max_output_length": 9},
                "splits": {"toy": {"source_vocabulary_size": 8, "target_vocabulary_size": 8,
                                   "tied_ids": [7], "lender_ids": [4, 5]}}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    training = dict(study.TRAINING, max_steps=2, eval_every=2)
    record = study.train_job({"candidate": "tie", "split": "toy", "seed": 0}, tmp_path,
                             manifest, training)
    assert record["steps"] == 2 and [step for step, *_ in record["validation_curve"]] == [2]
    assert record["best_step"] == 2 and 0.0 <= record["test_accuracy"] <= 1.0
    assert record["tied_ids"] == [7]
