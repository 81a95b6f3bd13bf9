"""End to end through the command-line tools: train → evaluate → export → serve.

The tools run in this process (their `main`), as `python -m` would run them; only what must
not see this process's modules runs apart: the served SavedModel, in a process that imports
TensorFlow alone, and `saved_model_cli`.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=str(REPO))
COMMANDS = ["jump twice after walk left", "walk", "run around right", "", "jump dax",
            "walk " * 40, "walk after", "and and and"]


def train(*args):
    from compgen_tf.train import main

    return main([str(arg) for arg in args])


def cli(*args):
    from compgen_tf.cli import main

    return main([str(arg) for arg in args])


def run(*args, check=True):
    result = subprocess.run([sys.executable, *args], cwd=REPO, env=ENV, capture_output=True,
                            text=True, timeout=600)
    if check and result.returncode:
        raise AssertionError(f"{args} failed ({result.returncode}):\n{result.stderr[-3000:]}")
    return result


# A 40-step model emits no <eos>: a short output budget keeps the scoring of the ~20,700
# test commands (and the served translations) from decoding 64 steps each.
TINY_SETTINGS = ["--set", "training.eval_every=20", "--set", "model_args.hidden_units=16",
                 "--set", "model_args.embedding_dim=16", "--set", "model_args.max_output_length=12"]


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run") / "seq2seq"
    assert train("--model", "seq2seq", "--split", "simple_p1", "--steps", "40",
                 *TINY_SETTINGS, "--output", run_dir, "--quiet") == 0
    return run_dir


def test_help_lists_models_and_splits(capsys):
    with pytest.raises(SystemExit) as exit_:
        train("--help")
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "seq2seq" in out and "addprim_jump" in out and "template_around_right" in out


def test_default_training_is_syntactic_attention_on_add_jump():
    """`python -m compgen_tf.train` with no flag (what `make train` runs) trains the README's
    default: Syntactic Attention on addprim_jump with add-jump's configuration, which is
    `syntax_tie_first_step.json` (issue 35); its results file is `addprim_jump.json`."""
    import json

    from compgen_tf.experiments.config import comparable, load_config
    from compgen_tf.train import DEFAULT_MODEL, DEFAULT_SPLIT
    from compgen_tf.experiments.kinds import experiment_for

    model = DEFAULT_MODEL
    config = experiment_for(model).resolve_config(model, DEFAULT_SPLIT[model])
    assert (config.model, config.task) == ("syntactic_attention", "addprim_jump")
    config = config.to_json()
    configs = REPO / "configs" / "syntactic_attention"
    chosen = load_config(configs / "syntax_tie_first_step.json")
    assert comparable({k: config[k] for k in chosen}) == comparable(chosen)
    assert chosen["model_args"]["syntax_tying"] == "bare_words"
    assert chosen["model_args"]["first_step_on_words"] is True
    assert comparable(load_config(configs / "default.json")) != comparable(chosen)
    results = json.loads((REPO / "results" / "syntactic_attention" / "addprim_jump.json")
                         .read_text())
    assert comparable(results["config"]) == comparable(
        {k: v for k, v in config.items() if k in results["config"]})
    makefile = (REPO / "Makefile").read_text()
    assert "MODEL ?= syntactic_attention" in makefile


def test_bad_config_is_a_clear_error(tmp_path, capsys):
    assert train("--split", "simple_p1", "--set", "training.lr=1", "--output",
                 tmp_path / "r") == 2
    assert "unknown key training.lr" in capsys.readouterr().err


def test_unknown_evaluate_split_is_refused_before_training(tmp_path, capsys):
    assert train("--split", "simple_p1", "--evaluate-splits", "validation", "dev", "--output",
                 tmp_path / "r") == 2
    err = capsys.readouterr().err
    assert "--evaluate-splits: dev is not a split of simple_p1" in err
    assert "train, validation, test" in err and not (tmp_path / "r").exists()
    assert train("--model", "meta_seq2seq", "--task", "mutual_exclusivity",
                 "--evaluate-splits", "validation", "--output", tmp_path / "m") == 2
    assert "--evaluate-splits applies to the SCAN models" in capsys.readouterr().err
    # BLEU selection belongs to the translation splits: refused before any training.
    assert train("--split", "simple_p1", "--set", "training.selection=bleu", "--output",
                 tmp_path / "b") == 2
    assert "needs a translation split" in capsys.readouterr().err


def test_run_directory_contents(trained_run):
    for name in ("config.json", "source_vocabulary.json", "target_vocabulary.json",
                 "best_model.keras", "metrics.json", "history.jsonl", "errors_test.jsonl"):
        assert (trained_run / name).exists(), name
    assert list((trained_run / "checkpoints").glob("ckpt-*.index"))
    assert list((trained_run / "logs").iterdir())
    metrics = json.loads((trained_run / "metrics.json").read_text())
    assert metrics["steps"] == 40 and metrics["seed"] == 0 and metrics["split"] == "simple_p1"
    assert set(metrics["accuracy"]) == {"train", "validation", "test"}
    assert all(0.0 <= a <= 1.0 for a in metrics["accuracy"].values())
    assert metrics["versions"]["keras"].startswith("3.")
    errors = [json.loads(line) for line in (trained_run / "errors_test.jsonl").open()]
    n_test = 20910 - 209  # simple_p1: 1% of the commands for training
    assert len(errors) == round((1 - metrics["accuracy"]["test"]) * n_test)
    assert set(errors[0]) == {"command", "expected", "predicted"}


def test_rerun_resumes_without_training_again(trained_run, capsys):
    history = (trained_run / "history.jsonl").read_text()
    assert train("--model", "seq2seq", "--split", "simple_p1", "--steps", "40",
                 *TINY_SETTINGS, "--output", trained_run, "--quiet") == 0
    assert "test exact match" in capsys.readouterr().out
    assert (trained_run / "history.jsonl").read_text() == history
    assert train("--split", "simple_p1", "--steps", "41", "--output", trained_run,
                 "--quiet") == 2
    assert "different configuration" in capsys.readouterr().err


def test_evaluate_cli(trained_run, capsys):
    before = json.loads((trained_run / "metrics.json").read_text())["accuracy"]
    assert cli("evaluate", "--run", trained_run, "--splits", "validation") == 0
    assert "validation: exact match" in capsys.readouterr().out
    # The scores of the splits not evaluated again stay.
    assert json.loads((trained_run / "metrics.json").read_text())["accuracy"] == before
    assert cli("evaluate", "--run", trained_run / "nope") == 2
    assert capsys.readouterr().err == f"error: run directory {trained_run / 'nope'} does not exist\n"


# Rows of the 20,000-command batch given a bad command, and their errors.
BAD_ROWS = {7: ("", "empty command"), 9_999: ("jump dax", "unknown word(s): dax"),
            12_345: ("walk " * 40, "command too long: 40 words, the maximum is 32"),
            19_999: ("walk after", "not a SCAN command")}


def test_export_serves_strings_in_a_tensorflow_only_process(trained_run, tmp_path, capsys):
    """The SavedModel loaded by TensorFlow alone (no compgen_tf, no tfds_scan; TensorFlow
    imports Keras itself) answers what a client may send: commands good and bad, as
    `translate` does; an empty batch (TF Serving's batcher sends them); 20,000 commands at
    once, as 20 batches of 1,000; and the wrong dtypes and shapes, with an error that names
    what was expected (serving/README.md, "Bad input")."""
    import tfds_scan

    out_dir = tmp_path / "models" / "scan" / "1"
    assert cli("export", "--run", trained_run, "--out", out_dir) == 0
    many = sorted(tfds_scan.all_commands())[:20_000]
    for row, (command, _) in BAD_ROWS.items():
        many[row] = command
    commands_file = tmp_path / "commands.json"
    commands_file.write_text(json.dumps(many))
    served = run("-c", f"""
import json, sys
import numpy as np
import tensorflow as tf
serve = tf.saved_model.load({str(out_dir)!r}).signatures["serving_default"]
out = serve(commands=tf.constant({COMMANDS!r}))
report = {{"outputs": {{k: [x.decode() for x in v.numpy()] for k, v in out.items()}},
          "empty": {{k: [v.shape.as_list(), v.dtype.name]
                    for k, v in serve(commands=tf.constant([], tf.string)).items()}}}}
many = json.loads(open({str(commands_file)!r}).read())
whole = serve(commands=tf.constant(many))
parts = [serve(commands=tf.constant(many[i:i + 1000])) for i in range(0, 20000, 1000)]
report["rows"] = {{k: int(v.shape[0]) for k, v in whole.items()}}
report["same_as_20_batches"] = {{k: bool(np.array_equal(v.numpy(), np.concatenate(
    [part[k].numpy() for part in parts]))) for k, v in whole.items()}}
report["errors"] = {{row: whole["error"][row].numpy().decode() for row in {list(BAD_ROWS)!r}}}
bad = {{"int": tf.constant([1, 2]), "float": tf.constant([0.5]),
        "2-D": tf.constant([["walk", "jump"]]), "scalar": tf.constant("walk")}}
for kind, value in bad.items():
    try:
        report[kind] = {{k: v.shape.as_list() for k, v in serve(commands=value).items()}}
    except tf.errors.InvalidArgumentError as error:
        report[kind] = error.message
report["modules"] = sorted(m for m in sys.modules if m.split(".")[0] in ("compgen_tf", "tfds_scan"))
print(json.dumps(report))
""").stdout.strip().splitlines()[-1]
    report = json.loads(served)
    assert report["modules"] == []

    import keras

    import compgen_tf  # noqa: F401

    model = keras.saving.load_model(trained_run / "best_model.keras")
    outputs = report["outputs"]
    assert model.translate(COMMANDS[:3], return_errors=True) == (outputs["actions"][:3],
                                                                 outputs["error"][:3])
    assert outputs["error"][3:] == ["empty command", "unknown word(s): dax",
                                    "command too long: 40 words, the maximum is 32",
                                    "not a SCAN command", "not a SCAN command"]
    assert outputs["actions"][3:] == ["", "", "", "", ""]

    assert report["empty"] == {"actions": [[0], "string"], "error": [[0], "string"]}
    assert report["rows"] == {"actions": 20_000, "error": 20_000}
    assert report["same_as_20_batches"] == {"actions": True, "error": True}
    assert report["errors"] == {str(row): error for row, (_, error) in BAD_ROWS.items()}
    for kind, dtype in (("int", "int32"), ("float", "float")):
        assert f"expected to be a string tensor but is a {dtype} tensor" in report[kind]
    for kind, shape in (("2-D", "[1,2]"), ("scalar", "[]")):
        assert (f"Shape of tensor commands {shape} is not compatible with expected shape [?]"
                in report[kind]), report[kind]

    saved_model_cli = Path(sys.executable).with_name("saved_model_cli")
    shown = subprocess.run([str(saved_model_cli), "show", "--all", "--dir", str(out_dir)], env=ENV,
                           capture_output=True, text=True, check=True).stdout
    signature = shown.split("signature_def['serving_default']")[1].split("MetaGraph")[0]
    assert signature.count("DT_STRING") == 3 and "DT_INVALID" not in signature  # in, 2 outs
    ran = subprocess.run([str(saved_model_cli), "run", "--dir", str(out_dir), "--tag_set", "serve",
                          "--signature_def", "serving_default", "--input_exprs",
                          "commands=['jump dax']"], env=ENV, capture_output=True, text=True,
                         check=True).stdout
    assert "unknown word(s): dax" in ran

    capsys.readouterr()
    assert cli("export", "--run", trained_run, "--out", out_dir) == 2
    assert "not empty" in capsys.readouterr().err


def test_concurrent_answers_equal_single_command_answers(trained_run, tmp_path):
    """What a model server does to the graph: several threads, mixed batch sizes, good and bad
    commands; every answer equals the command's answer alone (benchmarks/serving_load.py)."""
    out_dir = tmp_path / "export"
    assert cli("export", "--run", trained_run, "--out", out_dir) == 0
    sys.path.insert(0, str(REPO / "benchmarks"))
    from serving_load import run_load

    result = run_load(out_dir, threads=3, requests=4, batch_sizes=(1, 7, 64), seconds=120,
                      pool_size=256)
    assert result["distinct_commands"] > 100
    assert result["total_mismatches"] == 0 and result["total_exceptions"] == 0
    for size, stats in result["batch_sizes"].items():
        assert stats["exceptions"] == 0, stats["exception_examples"]
        assert stats["mismatches"] == 0, stats["mismatched_examples"]
        assert stats["calls"] == 3 * 4, size



def test_xla_single_command_export_answers_as_the_plain_one(trained_run, tmp_path):
    """`export --xla-single-command`: one-command calls take the XLA-compiled decoder at
    their own width (one compiled function per width), batches the plain graph; every
    answer equals the plain export's."""
    import tensorflow as tf

    assert cli("export", "--run", trained_run, "--out", tmp_path / "plain") == 0
    assert cli("export", "--run", trained_run, "--out", tmp_path / "xla",
               "--xla-single-command") == 0
    plain, xla = (tf.saved_model.load(str(tmp_path / name)).signatures["serving_default"]
                  for name in ("plain", "xla"))

    def answers(serve, commands):
        out = serve(commands=tf.constant(commands, tf.string))
        return [[x.decode() for x in out[key].numpy()] for key in ("actions", "error")]

    assert answers(xla, []) == answers(plain, []) == [[], []]  # an empty batch, too

    nine_words = "jump around left twice and walk opposite right thrice"  # 11 ids, the widest
    for command in COMMANDS + ["look opposite left thrice and run", "turn right", nine_words]:
        assert answers(xla, [command]) == answers(plain, [command]), command
    assert answers(xla, COMMANDS) == answers(plain, COMMANDS)


def test_padding_and_xla_change_no_decoded_id(trained_run):
    """What `--xla-single-command` relies on, on ids rather than strings (this small model
    emits no <eos>, so its exported answers are all errors): a command padded to a wider
    width, decoded under XLA, gives the ids of the plain decoding."""
    import tensorflow as tf

    from compgen_tf.experiments.experiment import load_run_model

    model = load_run_model(trained_run)
    xla_decode = tf.function(model.greedy_decode, jit_compile=True)
    for command in ["walk", "turn left twice", "jump around left twice and walk opposite right "
                    "thrice"]:
        ids, _ = model.encode_commands(tf.constant([command]))
        plain = model.greedy_decode(ids).numpy()
        for width in (16, 34):
            padded = tf.pad(ids, [[0, 0], [0, width - ids.shape[1]]])
            assert (model.greedy_decode(padded).numpy() == plain).all(), (command, width)
            assert (xla_decode(padded).numpy() == plain).all(), (command, width)


def test_translation_traces_its_decoder_once_for_every_batch_shape(trained_run):
    from compgen_tf.experiments.experiment import load_run_model
    from compgen_tf.models.seq2seq_model import graph_for_any_ids

    model = load_run_model(trained_run)
    # Batches of other sizes and lengths, then one split into two batches.
    first = model.translate(["walk", "run twice"])
    assert model.translate(["jump around left twice and walk opposite right thrice"] * 3 +
                            ["walk"], batch_size=2)[-1] == first[0]
    assert graph_for_any_ids(model, "greedy_decode", 1).experimental_get_tracing_count() == 1
    # The graph lives outside the model: a reloaded model is not kept alive by it.
    import gc
    import weakref

    alive = weakref.ref(model)
    del model
    gc.collect()
    assert alive() is None


def test_a_run_scores_its_best_weights_on_the_decoder_that_validation_traced(tmp_path):
    """After training, the run's own model takes the best model's weights and is scored on
    the graph that validation traced: one trace of the decoder for the whole run."""
    import numpy as np

    import keras

    from compgen_tf.experiments.kinds import experiment_for
    from compgen_tf.models.seq2seq_model import graph_for_any_ids

    experiment = experiment_for("seq2seq")
    overrides = [s for s in TINY_SETTINGS if s != "--set"] + ["training.max_steps=4",
                                                              "training.eval_every=2"]
    config = experiment.resolve_config("seq2seq", "simple_p1", overrides=overrides)
    model = experiment.build(config, 0)
    metrics = experiment.train(config, tmp_path / "run", seed=0, verbose=0, model=model,
                               evaluate_splits=["train", "validation"])
    # 4 steps decode no <eos>: validation scores 0 at step 2 and again at step 4, which is
    # no improvement, so the best weights are step 2's: the last ones (which steps 3 and 4
    # moved) would fail the comparison below.
    assert (metrics["best_step"], metrics["steps"]) == (2, 4)
    assert set(metrics["accuracy"]) == {"train", "validation"}
    best = keras.saving.load_model(tmp_path / "run" / "best_model.keras")
    for kept, saved in zip(model.weights, best.weights):
        np.testing.assert_array_equal(kept.numpy(), saved.numpy(), err_msg=kept.path)
    assert graph_for_any_ids(model, "greedy_decode", 1).experimental_get_tracing_count() == 1


def test_bucketed_ids_pad_widths_and_the_decoded_rows_only():
    # What JAX's jitted decoding is given (`graph_for_any_ids`): a few shapes, the ids
    # themselves first. Padded rows copy the first row, whose outputs are then dropped.
    import numpy as np

    from compgen_tf.models.seq2seq_model import bucketed_ids

    support = np.arange(1, 31, dtype="int32").reshape(3, 10)
    queries = np.array([[5, 6, 0], [7, 0, 0], [8, 9, 4]], "int32")
    out_support, out_queries = bucketed_ids([support, queries])
    assert out_support.shape == (3, 16) and out_queries.shape == (8, 8)
    np.testing.assert_array_equal(out_support[:, :10], support)
    assert not out_support[:, 10:].any()
    np.testing.assert_array_equal(out_queries[:3, :3], queries)
    np.testing.assert_array_equal(out_queries[3:, :3], np.repeat(queries[:1], 5, axis=0))
    assert not out_queries[:, 3:].any()
    assert bucketed_ids([np.ones((9, 8), "int32")])[0].shape == (16, 8)
    assert bucketed_ids([np.ones((0, 5), "int32")])[0].shape == (0, 8)
