import json

import pytest

from compgen_tf.experiments.config import ConfigError, apply_overrides, config_path, load_config


def test_committed_configs_are_valid():
    from compgen_tf.experiments.config import CONFIG_DIR

    paths = sorted(p for p in CONFIG_DIR.glob("*/*.json") if p.name != "search_space.json")
    assert paths
    for path in paths:
        config = load_config(path)
        assert config["training"] and config["model_args"], path
        # Each says how its settings were chosen (a variant is a new choice: not inherited).
        assert json.loads(path.read_text())["provenance"] == config["provenance"], path


def test_overrides_parse_json_values():
    config = load_config(config_path("seq2seq", "simple"))
    config = apply_overrides(config, ["training.batch_size=8", "model_args.hidden_units=16",
                                      "data.validation_fraction=0.2"])
    assert config["training"]["batch_size"] == 8
    assert config["model_args"]["hidden_units"] == 16
    assert config["data"]["validation_fraction"] == 0.2


@pytest.mark.parametrize("override, message", [
    ("training.bach_size=8", "unknown key training.bach_size"),
    ("training.batch_size=big", "training.batch_size must be int"),
    ("training.batch_size=0", "must be >= 1"),
    ("batch_size=8", "SECTION.KEY=VALUE"),
    ("data.validation_fraction=1.5", "validation_fraction must be in"),
    ("data.validation_carve=last", r"validation_carve must be one of \['random', 'tail'\]"),
    ("training.selection=loss", r"training.selection must be one of \['exact_match', 'bleu', 'last'\]"),
])
def test_bad_overrides_are_precise(override, message):
    config = load_config(config_path("seq2seq", "simple"))
    with pytest.raises(ConfigError, match=message):
        apply_overrides(config, [override])


def test_bad_files(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text("{")
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(tmp_path / "broken.json")
    (tmp_path / "section.json").write_text(json.dumps({"optimizer": {}}))
    with pytest.raises(ConfigError, match="unknown section"):
        load_config(tmp_path / "section.json")


def test_tail_validation_config_validates_on_the_end_of_the_official_file():
    from compgen_tf.experiments.config import CONFIG_DIR
    from compgen_tf.experiments.scan import split_examples

    config = load_config(CONFIG_DIR / "syntactic_attention" / "addprim_jump_tail_validation.json")
    train = split_examples("addprim_jump", "train", config["data"])
    validation = split_examples("addprim_jump", "validation", config["data"])
    assert validation == train[-round(0.2 * len(train)):]
    default = load_config(config_path("syntactic_attention", "addprim_jump"))
    assert split_examples("addprim_jump", "validation", default["data"]) != validation



SCAN_MODEL = ["--model", "syntactic_attention"]


@pytest.mark.parametrize("module, argv, message", [
    ("train", SCAN_MODEL + ["--set", "model_args.dropout=1.5"],
     "model_args of syntactic_attention: dropout must be in [0, 1), got 1.5"),
    ("train", SCAN_MODEL + ["--set", "model_args.semantic_dim=2.5"],
     "semantic_dim must be a positive integer, got 2.5"),
    ("train", SCAN_MODEL + ["--set", "model_args.semantic_width=3"],
     "model_args of syntactic_attention: unknown argument(s) semantic_width; it takes: "),
    ("reproduce", SCAN_MODEL + ["--split", "simple", "--seeds", "1", "--set",
                                "model_args.dropout=1.5"], "dropout must be in [0, 1)"),
    ("train", ["--model", "meta_seq2seq", "--task", "mutual_exclusivity", "--set",
               "model_args.num_layers=0"], "num_layers must be a positive integer, got 0"),
    ("reproduce", ["--model", "meta_seq2seq", "--task", "mutual_exclusivity", "--seeds", "1",
                   "--set", "model_args.dropout=-0.5"], "dropout must be in [0, 1), got -0.5"),
    ("tune", ["--model", "stack_lstm", "--task", "palindromes", "--set",
              "model_args.units=0"], "units must be a positive integer, got 0"),
    ("reproduce", SCAN_MODEL + ["--split", "simple", "--seeds", "1", "--no-support-loss"],
     "--no-support-loss and --no-decoder-attention are meta_seq2seq ablations"),
    ("reproduce", ["--model", "meta_seq2seq", "--task", "mutual_exclusivity", "--seeds", "1",
                   "--no-decoder-attention", "--set", "model_args.num_layers=0"],
     "num_layers must be a positive integer, got 0"),
    ("train", ["--model", "stack_lstm", "--task", "palindromes", "--set",
               "model_args.units=0"], "units must be a positive integer, got 0"),
])
def test_bad_model_args_are_refused_before_a_run_directory_exists(
        module, argv, message, tmp_path, monkeypatch, capsys):
    from compgen_tf.cli import main

    monkeypatch.chdir(tmp_path)
    if module == "reproduce":
        argv = argv + ["--results-dir", str(tmp_path / "results")]
    assert main([module] + argv + ["--steps", "1", "--quiet"]) == 2
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def write(path, config):
    path.write_text(json.dumps(config))
    return path


def test_a_variant_is_its_base_with_its_own_keys_laid_over():
    from compgen_tf.experiments.config import CONFIG_DIR

    base = load_config(CONFIG_DIR / "syntactic_attention" / "default.json")
    variant = load_config(CONFIG_DIR / "syntactic_attention" / "addprim_jump_syntax_action.json")
    assert variant["model_args"] == dict(base["model_args"], syntax_action=True)
    assert variant["training"] == base["training"] and variant["data"] == base["data"]
    assert "base" not in variant
    assert variant["notes"].startswith(base["notes"])
    assert "Variant (addprim_jump_syntax_action.json): Ablation 'Syntax-action'" in variant["notes"]
    # Two levels: syntax noise over zero boundaries over default.json.
    noise = load_config(CONFIG_DIR / "syntactic_attention"
                        / "addprim_jump_zero_boundaries_syntax_noise.json")
    assert noise["model_args"]["learned_boundary_semantics"] is False
    assert noise["model_args"]["syntax_word_noise"] == 0.1
    assert noise["training"] == base["training"]


def test_committed_variants_hold_only_what_differs_from_their_base():
    from compgen_tf.experiments.config import CONFIG_DIR

    variants = [p for p in CONFIG_DIR.glob("*/*.json") if "base" in json.loads(p.read_text())]
    assert len(variants) >= 14
    for path in variants:
        own = json.loads(path.read_text())
        base = load_config(path.parent / own["base"])
        assert own["notes"] and base["notes"] not in own["notes"], path
        for section in ("model_args", "training", "data"):
            for key, value in own.get(section, {}).items():
                assert base[section].get(key, "<unset>") != value, f"{path}: {section}.{key}"


def test_bad_bases_are_clear_errors(tmp_path):
    write(tmp_path / "a.json", {"base": "b.json", "training": {"batch_size": 2}})
    with pytest.raises(ConfigError, match=r"b\.json \(the base of .*a\.json\) does not exist"):
        load_config(tmp_path / "a.json")
    write(tmp_path / "b.json", {"base": "a.json"})
    with pytest.raises(ConfigError, match="its bases form a cycle"):
        load_config(tmp_path / "a.json")
    write(tmp_path / "b.json", {"base": 3})
    with pytest.raises(ConfigError, match="'base' must be a file name"):
        load_config(tmp_path / "a.json")
    write(tmp_path / "b.json", {"training": {"batch_size": 8, "max_steps": 5}, "notes": "b"})
    write(tmp_path / "a.json", {"base": "b.json", "training": {"bach_size": 2}})
    with pytest.raises(ConfigError, match="unknown key training.bach_size"):
        load_config(tmp_path / "a.json")
    write(tmp_path / "a.json", {"base": "b.json", "training": {"batch_size": 2}})
    assert load_config(tmp_path / "a.json")["training"] == {"batch_size": 2, "max_steps": 5}
    assert load_config(tmp_path / "a.json")["notes"] == "b"
    write(tmp_path / "b.json", [1, 2])
    with pytest.raises(ConfigError, match=r"b\.json: a configuration is a JSON object"):
        load_config(tmp_path / "a.json")
    write(tmp_path / "b.json", {"training": None})
    with pytest.raises(ConfigError, match=r"b\.json: section 'training' must be an object"):
        load_config(tmp_path / "a.json")


def test_notes_are_not_part_of_a_configuration(tmp_path):
    """Run directories compare configurations without their notes, and keep their own."""
    from compgen_tf.experiments.config import comparable
    from compgen_tf.experiments.experiment import prepare_run_dir

    config = load_config(config_path("seq2seq", "simple"))
    assert comparable(dict(config, notes="other")) == comparable(config)
    prepare_run_dir(tmp_path, dict(config, notes="first"))
    prepare_run_dir(tmp_path, dict(config, notes="reworded"))
    assert json.loads((tmp_path / "config.json").read_text())["notes"] == "first"
    with pytest.raises(ValueError, match="different configuration"):
        prepare_run_dir(tmp_path, apply_overrides(config, ["training.batch_size=8"]))


def test_provenance_is_documentation_checked_and_not_inherited(tmp_path):
    """A config says how its settings were chosen; a variant must say so again (it is a new
    choice); the command line's changes are not on record."""
    from compgen_tf.experiments.config import comparable
    from compgen_tf.experiments.kinds import experiment_for

    faithful = {"kind": "faithful", "reason": "the paper's settings"}
    base = load_config(config_path("seq2seq", "simple"))
    write(tmp_path / "base.json", dict(base, provenance=faithful))
    write(tmp_path / "variant.json", {"base": "base.json", "training": {"batch_size": 8}})
    write(tmp_path / "chosen.json", {"base": "base.json", "training": {"batch_size": 8},
                                     "provenance": {"kind": "validation", "reason": "dev"}})
    assert load_config(tmp_path / "base.json")["provenance"] == faithful
    assert "provenance" not in load_config(tmp_path / "variant.json")
    assert load_config(tmp_path / "chosen.json")["provenance"]["kind"] == "validation"
    assert comparable(dict(base, provenance=faithful)) == comparable(base)

    experiment = experiment_for("seq2seq")
    resolved = experiment.resolve_config("seq2seq", "simple", tmp_path / "base.json")
    assert resolved.provenance == faithful
    unrecorded = experiment.resolve_config("seq2seq", "simple", tmp_path / "variant.json")
    assert unrecorded.provenance == {
        "kind": "post-hoc",
        "reason": f"not recorded: {tmp_path / 'variant.json'} does not say how its settings "
                  "were chosen"}
    changed = experiment.resolve_config("seq2seq", "simple", tmp_path / "base.json",
                                        ["training.batch_size=8"], steps=10)
    assert changed.provenance["kind"] == "post-hoc"
    assert "training.batch_size: 32 -> 8" in changed.provenance["reason"]
    assert "training.max_steps" in changed.provenance["reason"]
    # Setting a value to what the file holds changes nothing.
    same = experiment.resolve_config("seq2seq", "simple", tmp_path / "base.json",
                                     [f"training.batch_size={base['training']['batch_size']}"])
    assert same.provenance == faithful

    for bad in ({"kind": "tuned", "reason": "x"}, {"kind": "faithful"},
                {"kind": "faithful", "reason": " "}, "faithful"):
        write(tmp_path / "bad.json", dict(base, provenance=bad))
        with pytest.raises(ConfigError, match="provenance must be"):
            load_config(tmp_path / "bad.json")
