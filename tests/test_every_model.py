"""`reproduce`, `evaluate`, `export` and `tune` run for every registered model (tiny configs)."""

import json

import pytest

from compgen_tf import registry
from compgen_tf.experiments.kinds import experiment_for
from compgen_tf.cli import main as cli

# model -> (task, --set overrides shrinking it to a few seconds of work)
TINY = {
    "seq2seq": ("simple_p1", ["model_args.embedding_dim=8", "model_args.hidden_units=8",
                              "model_args.max_output_length=2"]),
    "counting_seq2seq": ("simple_p1", ["model_args.embedding_dim=8", "model_args.hidden_units=8",
                                       "model_args.max_output_length=2",
                                       "training.length_head_steps=2"]),
    "equivariant_seq2seq": ("simple_p1", ["model_args.embedding_dim=4",
                                          "model_args.hidden_units=4",
                                          "model_args.max_output_length=2",
                                          "training.jit_compile=false"]),
    "syntactic_attention": ("simple_p1", ["model_args.semantic_dim=8",
                                          "model_args.syntax_embedding_dim=8",
                                          "model_args.syntax_units=8",
                                          "model_args.encoder_units=8",
                                          "model_args.max_output_length=2"]),
    "meta_seq2seq": ("mutual_exclusivity", ["model_args.embedding_dim=8",
                                            "model_args.hidden_units=8",
                                            "model_args.num_layers=1",
                                            "model_args.max_output_length=2",
                                            "data.validation_episodes=1"]),
    "symbol_convolution": ("rule_learning", []),
    "mlp_baseline": ("rule_learning", []),
    "recurrent_baseline": ("rule_learning", []),
    "stack_lstm": ("palindromes", ["data.train_size=120", "data.test_size=12",
                                   "training.jit_compile=false"]),
    "lstm_baseline": ("palindromes", ["data.train_size=120", "data.test_size=12",
                                      "training.jit_compile=false"]),
}
STEPS = ["training.eval_every=2", "training.checkpoint_every=2"]
# A whole one-trial search for one model of each kind of experiment (the search itself is the
# same code for all; tests/test_tune.py searches seq2seq, of the SCAN kind); the others build
# their models at both ends of their search spaces.
SEARCHED = {"meta_seq2seq", "stack_lstm"}


def test_the_table_covers_every_registered_model():
    assert set(TINY) == set(registry.MODELS)
    assert all(TINY[name][0] in spec.tasks for name, spec in registry.MODELS.items())


def sets(overrides):
    return [arg for override in overrides for arg in ("--set", override)]


@pytest.mark.parametrize("name", sorted(registry.MODELS))
def test_reproduce_evaluate_export_and_tune_work_for_every_model(name, tmp_path, capsys):
    spec = registry.MODELS[name]
    task, overrides = TINY[name]
    where = ["--split" if spec.trains_on == "scan" else "--task", task]
    model = ["--model", name, *where, *sets(overrides + STEPS)]

    # reproduce: one seed, its run directory and its results file(s).
    assert cli(["reproduce", *model, "--seeds", "1", "--steps", "2", "--quiet",
                "--runs-dir", str(tmp_path / "runs"),
                "--results-dir", str(tmp_path / "results")]) == 0
    run_dir = tmp_path / "runs" / name / task / "seed0"
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["steps"] == 2
    config = experiment_for(spec).recorded_run_config(run_dir)
    names = experiment_for(spec).results_names(config, task)
    for file in names:
        document = json.loads((tmp_path / "results" / name / f"{file}.json").read_text())
        assert document["summary"]["n"] == 1
        assert document["versions"]["compgen-tf"] == "0.2.0"
    tested = experiment_for(spec).test_parts(config)

    assert set(tested) <= set(metrics["accuracy"])

    # evaluate: the same score again from the run directory alone (validation: the test
    # sets of the SCAN splits are the slow part, and evaluate's test scoring is tested in
    # tests/test_pipeline.py and tests/test_toy_runs.py).
    capsys.readouterr()
    assert cli(["evaluate", "--run", str(run_dir), "--splits", "validation"]) == 0
    again = json.loads((run_dir / "metrics.json").read_text())
    assert again["accuracy"]["validation"] == pytest.approx(metrics["accuracy"]["validation"],
                                                            abs=1e-6)

    # export: a SavedModel where the model translates strings; a clear refusal otherwise.
    out = tmp_path / "export" / "1"
    code = cli(["export", "--run", str(run_dir), "--out", str(out)])
    if spec.trains_on == "toy":
        assert code == 2
        assert "has no string signature to export" in capsys.readouterr().err
    else:
        assert code == 0 and (out / "saved_model.pb").exists()

    if name not in SEARCHED:
        # Every value at both ends of the committed search space makes a model that builds.
        from compgen_tf.experiments.search_space import (apply_hyperparameters,
                                                         load_search_space, search_space_path)

        experiment = experiment_for(spec)
        base = experiment.resolve_config(name, task, overrides=overrides).to_json()
        specs = load_search_space(search_space_path(name), name, base)
        for end in (0, -1):
            values = {key: (spec_["values"][end] if spec_["type"] == "choice"
                            else spec_["min" if end == 0 else "max"])
                      for key, spec_ in specs.items()}
            model = experiment.build(
                experiment.run_config(apply_hyperparameters(base, values)), 0)
            assert model.count_params() > 0
        return

    # tune: one random trial of the committed search space, scored on validation only.
    output = tmp_path / "tune"
    assert cli(["tune", *model, "--tuner", "random", "--max-trials", "1", "--steps", "2",
                "--output", str(output), "--quiet"]) == 0
    (trial,) = json.loads((output / "trials.json").read_text())["trials"]
    assert trial["status"] == "COMPLETED" and trial["steps"] == 2
    trial_metrics = json.loads((output / "random" / f"trial_{trial['trial_id']}" / "run" /
                                "metrics.json").read_text())
    assert set(trial_metrics["accuracy"]) == {"validation"}
    assert (output / "best_config.json").exists()
