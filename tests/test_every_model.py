"""`reproduce`, `evaluate`, `export` and `tune` run for every registered model (tiny configs)."""

import json
import math

import pytest

from compgen_tf import registry
from compgen_tf.groups import Symmetry
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
    "transformer": ("simple_p1", ["model_args.width=8", "model_args.num_layers=1",
                                  "model_args.num_heads=2", "model_args.feedforward_dim=8",
                                  "model_args.max_output_length=2"]),
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


def lstm_parameters(inputs, units):
    """A Keras LSTM's parameters: kernel, recurrent kernel and bias of its four gates."""
    return 4 * units * (inputs + units + 1)


def dense_parameters(inputs, units):
    """A Dense layer's parameters: kernel and bias."""
    return inputs * units + units


def expected_parameter_count(name, model_args, model):
    """The number of parameters of model `name` with `model_args`, worked out from the
    architecture each model's docstring and builder describe; from `model` only the data's
    sizes (vocabularies, input shape), never a layer's width.

    Args:
        name: the registered model.
        model_args: the configuration's `model_args`, with the search-space values put in
            here (not by the code under test).
        model: the model built from that configuration.

    Returns:
        The count, an int.
    """
    args = model_args
    if name in ("seq2seq", "counting_seq2seq"):
        # Embedding -> biLSTM of H units a direction -> a 2H-unit Luong decoder: LSTM on the
        # previous token's embedding (+ the count left), tanh(W_c[h; context]), projection.
        sources = model.backbone.source_vocabulary_size
        targets = model.backbone.target_vocabulary_size
        width, hidden = args["embedding_dim"], args["hidden_units"]
        decoder = 2 * hidden
        count = (sources * width + 2 * lstm_parameters(width, hidden) + targets * width
                 + lstm_parameters(width + int(args.get("count_input", False)), decoder)
                 + dense_parameters(2 * decoder, decoder) + dense_parameters(decoder, targets))
        if args.get("count_attention"):
            count += decoder  # u, one number per encoder feature
        if args.get("length_head"):
            # The weighted automaton: a k x k transition and k offsets per source token, an
            # initial state and a readout.
            k = args["length_head"]["state_size"]
            count += sources * (k * k + k) + 2 * k
        return count
    if name == "equivariant_seq2seq":
        # Every weight has a group axis |G| (the product of the symmetry's cycle lengths);
        # the output bias is one number per orbit of the target vocabulary.
        symmetry = Symmetry.from_config(args["symmetry"])
        order = math.prod(len(cycle) for cycle in symmetry.output_cycles)
        sources = len(model.backbone.source_tokens)
        targets = len(model.backbone.target_tokens)
        orbits = targets - sum(len(cycle) - 1 for cycle in symmetry.output_cycles)
        width, hidden = args["embedding_dim"], args["hidden_units"]
        decoder = 2 * hidden

        def g_lstm(channels, units):
            return order * channels * 4 * units + order * units * 4 * units + 4 * units

        return (sources * width + 2 * g_lstm(width, hidden) + targets * width
                + order * (width + decoder) * decoder + decoder  # decoder_input GroupConv
                + g_lstm(decoder, decoder) + targets * decoder + orbits)
    if name == "syntactic_attention":
        assert not any(args.get(flag) for flag in (
            "sequential_semantics", "syntax_action", "nonlinear_semantics",
            "end_only_boundaries")), "the count below is of the plain architecture"
        sources = model.backbone.source_vocabulary_size
        targets = model.backbone.target_vocabulary_size
        semantic, syntax = args["semantic_dim"], args["syntax_embedding_dim"]
        syntax_units, encoder_units = args["syntax_units"], args["encoder_units"]
        decoder = 2 * encoder_units
        return (sources * semantic + sources * syntax  # the two embeddings
                + 2 * lstm_parameters(syntax, syntax_units)  # the shifted syntactic biLSTM
                + 2 * 2 * syntax_units  # its learned <sos> and <eos> states
                + 2 * lstm_parameters(2 * syntax_units, encoder_units)  # the key biLSTM
                + dense_parameters(2 * encoder_units, decoder)  # the first query
                + lstm_parameters(decoder, decoder)  # the decoder reads its context
                + dense_parameters(semantic, targets))  # from the semantic readout
    if name == "transformer":
        # Per layer: attention = 4 projections (d x d kernel, d bias); 2 LayerNorms of 2d
        # (3 in the decoder, around its cross-attention too); a d -> f -> d ReLU network.
        # Embeddings of both vocabularies (+ learned position tables), the output Dense;
        # universal: one encoder and one decoder layer; relative: (2k+1) x d/heads keys in
        # each self-attention.
        sources = model.backbone.source_vocabulary_size
        targets = model.backbone.target_vocabulary_size
        d, f, heads = args["width"], args["feedforward_dim"], args["num_heads"]
        attention = 4 * (d * d + d)
        feedforward = dense_parameters(d, f) + dense_parameters(f, d)
        relative = 0
        if args.get("positions") == "relative":
            relative = (2 * args["max_relative_distance"] + 1) * (d // heads)
        encoder = attention + relative + 2 * 2 * d + feedforward
        decoder = 2 * attention + relative + 3 * 2 * d + feedforward
        layers = 1 if args.get("universal") else args["num_layers"]
        tables = 2 * args["max_positions"] * d if args.get("positions") == "learned" else 0
        return ((sources + targets) * d + tables + layers * (encoder + decoder)
                + dense_parameters(d, targets))
    if name in ("symbol_convolution", "mlp_baseline", "recurrent_baseline"):
        syllables, steps = model.inputs[0].shape[1:]
        units = args["units"]
        hidden = {"symbol_convolution": dense_parameters(steps, units),  # width-1 Conv1D
                  "mlp_baseline": dense_parameters(syllables * steps, units),
                  "recurrent_baseline": units * (syllables + units + 1)}[name]  # SimpleRNN
        return hidden + dense_parameters(units, 2)
    if name == "lstm_baseline":
        from compgen_tf.models.symmetry.palindromes import SYMBOLS

        symbols, width, units = len(SYMBOLS), args["embedding_dim"], args["units"]
        return symbols * width + lstm_parameters(width, units) + dense_parameters(units, symbols)
    raise AssertionError(f"no parameter count written for {name}")


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
        # Every value at both ends of the committed search space makes a model that builds,
        # and builds it with those values: its parameter count is the architecture's at
        # those sizes.
        from compgen_tf.experiments.search_space import (apply_hyperparameters,
                                                         load_search_space, search_space_path)

        experiment = experiment_for(spec)
        base = experiment.resolve_config(name, task, overrides=overrides).to_json()
        specs = load_search_space(search_space_path(name), name, base)
        counts = []
        for end in (0, -1):
            values = {key: (spec_["values"][end] if spec_["type"] == "choice"
                            else spec_["min" if end == 0 else "max"])
                      for key, spec_ in specs.items()}
            model = experiment.build(
                experiment.run_config(apply_hyperparameters(base, values)), 0)
            model_args = {**base["model_args"],
                          **{key.split(".", 1)[1]: value for key, value in values.items()
                             if key.startswith("model_args.")}}
            counts.append(model.count_params())
            assert counts[-1] == expected_parameter_count(name, model_args, model), values
        # A search space that sizes the model makes both ends differ.
        assert (counts[0] != counts[1]) == any(key.startswith("model_args.") and
                                               key != "model_args.dropout" for key in specs)
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
