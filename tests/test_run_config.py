"""One typed run configuration, resolved once, and one run for every kind of experiment."""

import dataclasses
import json

import pytest

from compgen_tf import registry
from compgen_tf.errors import ConfigError
from compgen_tf.experiments import experiment as experiment_module
from compgen_tf.experiments.episodes import EPISODES
from compgen_tf.experiments.experiment import Experiment
from compgen_tf.experiments.run_config import DATA_KEYS, DataConfig, RunConfig
from compgen_tf.experiments.scan import SCAN
from compgen_tf.experiments.toy import TOY
from compgen_tf.training.settings import TRAINING_KEYS, TrainingConfig

TINY_SCAN = ["model_args.hidden_units=4", "model_args.embedding_dim=4",
             "training.max_steps=2", "training.eval_every=2", "training.checkpoint_every=2"]


def test_the_keys_types_and_defaults_are_the_dataclasses_fields():
    assert TRAINING_KEYS["batch_size"] is int and TRAINING_KEYS["clip_norm"] is float
    assert TRAINING_KEYS["jit_compile"] is bool and TRAINING_KEYS["selection"] is str
    assert "drops_once" not in TRAINING_KEYS  # set by the kind of experiment, not a file
    assert set(DATA_KEYS) == {f.name for f in dataclasses.fields(DataConfig)}
    training = TrainingConfig.from_section({"batch_size": 8.0, "learning_rate": 1,
                                            "clip_norm": None})
    # A whole float is an int, an int a float, null the default.
    assert (training.batch_size, training.learning_rate, training.clip_norm) == (8, 1.0, 5.0)
    assert type(training.batch_size) is int and type(training.learning_rate) is float
    assert training.checkpoint_interval == training.eval_every == 500


@pytest.mark.parametrize("section, message", [
    ({"bach_size": 8}, "unknown key training.bach_size"),
    ({"batch_size": True}, "training.batch_size must be int"),
    ({"jit_compile": 1}, "training.jit_compile must be true or false"),
    ({"eval_every": 0}, "training.eval_every must be >= 1, got 0"),
    ({"teacher_forcing_ratio": 1.5}, r"teacher_forcing_ratio must be in \[0, 1\]"),
    ({"selection": "loss"}, "training.selection must be one of"),
    ({"learning_rate_drop_step": 5}, "set training.learning_rate_decay_steps"),
])
def test_a_bad_training_setting_is_one_config_error_naming_it(section, message):
    with pytest.raises(ConfigError, match=message):
        TrainingConfig.from_section(section, origin="x.json")


def test_each_kind_resolves_over_its_own_defaults():
    meta = EPISODES.resolve_config("meta_seq2seq", "mutual_exclusivity",
                                   overrides=["training.clip_norm=null"])
    toy = TOY.resolve_config("mlp_baseline", "rule_learning")
    scan = SCAN.resolve_config("seq2seq", "simple")
    # A key set to null takes the kind's default: Lake 2019's clip for meta seq2seq.
    assert meta.training.clip_norm == 50.0 and meta.training.drops_once is True
    assert toy.training.clip_norm is None and toy.training.eval_every == 10  # the file's
    bare = TOY.run_config({"model": "mlp_baseline", "task": "rule_learning"})
    assert (bare.training.max_steps, bare.training.eval_every) == (1000, 100)
    assert scan.training.drops_once is False and scan.training.teacher_forcing_ratio == 0.5
    with pytest.raises(ConfigError, match="set training.learning_rate_drop_step"):
        EPISODES.resolve_config("meta_seq2seq", "mutual_exclusivity",
                                overrides=["training.learning_rate_decay_steps=10"])
    # A changed budget keeps the kind's defaults (a tuning trial, an --epochs budget).
    longer = meta.with_training(max_steps=7)
    assert (longer.training.max_steps, longer.training.clip_norm) == (7, 50.0)
    assert longer.to_json()["training"]["max_steps"] == 7 and meta.training.max_steps != 7


def test_the_json_form_records_what_was_given_and_resolves_to_the_same_config():
    config = SCAN.resolve_config("seq2seq", "simple", overrides=["training.batch_size=16"])
    record = config.to_json(seed=3)
    assert record["seed"] == 3 and record["split"] == "simple" and record["model"] == "seq2seq"
    # The given keys only: a default is not written into the record.
    assert "length_head_steps" not in record["training"]
    assert record["training"]["batch_size"] == 16 and record["provenance"]["kind"] == "post-hoc"
    del record["seed"]
    assert SCAN.run_config(record) == config
    assert isinstance(config, RunConfig) and config.data.length_bucket == 8


def test_model_args_names_are_checked_without_building_a_model(monkeypatch):
    built = []
    monkeypatch.setattr(registry, "build_model", lambda *a, **k: built.append(a))
    config = SCAN.resolve_config("syntactic_attention", "addprim_jump")
    assert built == [] and config.model_args["syntax_tying"] == "bare_words"
    with pytest.raises(ConfigError, match="unknown argument.s. semantic_width; it takes: "):
        SCAN.resolve_config("syntactic_attention", "addprim_jump",
                            overrides=["model_args.semantic_width=3"])
    with pytest.raises(ConfigError, match="unknown argument.s. size; it takes: "):
        TOY.resolve_config("stack_lstm", "palindromes", overrides=["model_args.size=3"])


def test_every_kind_runs_through_the_one_train_and_evaluate():
    for experiment in (SCAN, EPISODES, TOY):
        assert isinstance(experiment, Experiment)
        assert "train" not in type(experiment).__dict__, type(experiment).__name__
        assert "evaluate" not in type(experiment).__dict__, type(experiment).__name__


def test_a_run_builds_once_writes_config_once_and_never_reads_it_back(tmp_path, monkeypatch):
    calls = {"build": 0, "metrics": 0}
    build_model, write_metrics = registry.build_model, experiment_module.write_metrics

    def counted_build(*args, **kwargs):
        calls["build"] += 1
        return build_model(*args, **kwargs)

    def counted_write(*args):
        calls["metrics"] += 1
        return write_metrics(*args)

    def no_reading_back(run_dir):
        raise AssertionError(f"the run read {run_dir}/config.json back")

    monkeypatch.setattr(registry, "build_model", counted_build)
    monkeypatch.setattr(experiment_module, "write_metrics", counted_write)
    monkeypatch.setattr(experiment_module, "run_config", no_reading_back)
    config = SCAN.resolve_config("seq2seq", "simple_p1", overrides=TINY_SCAN)
    metrics = SCAN.train(config, tmp_path / "run", seed=1, verbose=0,
                         evaluate_splits=("validation",))
    assert calls == {"build": 1, "metrics": 1}
    assert json.loads((tmp_path / "run" / "config.json").read_text()) == config.to_json(seed=1)
    assert metrics == json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert (metrics["steps"], metrics["seed"], set(metrics["accuracy"])) == (2, 1, {"validation"})


def test_a_bad_model_value_fails_before_the_run_directory_exists(tmp_path):
    config = SCAN.resolve_config("seq2seq", "simple_p1",
                                 overrides=TINY_SCAN + ["model_args.dropout=1.5"])
    with pytest.raises(ConfigError, match=r"model_args of seq2seq: .*dropout"):
        SCAN.train(config, tmp_path / "run", verbose=0)
    assert not (tmp_path / "run").exists()


def test_train_takes_a_run_config_only(tmp_path):
    with pytest.raises(TypeError, match="config must be a RunConfig"):
        TOY.train({"model": "mlp_baseline", "task": "rule_learning"}, tmp_path / "run")
