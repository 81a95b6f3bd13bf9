"""A run on COGS: scores by category in metrics.json and the errors files, `errors` per
category, and the export of a COGS model (sentences in, logical forms or per-row errors out).

One tiny run for the module: 2 updates, decoding at most 16 tokens, scored on train (every
8th line), validation (the official dev set) and gen.
"""

import json
from collections import Counter

import keras
import pytest
import tensorflow as tf

from compgen_tf.models.export import export_model
from compgen_tf.experiments.config import config_path, load_config
from compgen_tf.experiments.experiment import load_run_model
from compgen_tf.experiments.scan import SCAN, evaluated_splits
from compgen_tf.models import AttentionSeq2Seq
from compgen_tf.models.preprocessor import vocabulary_words
from compgen_tf.reporting.error_analysis import run_errors
from compgen_tf.training.data import encode_split
from compgen_tf.training.fit import fit_split
from tfds_scan import cogs

TINY = dict(embedding_dim=8, hidden_units=8, max_output_length=16)


@pytest.fixture(scope="module")
def cogs_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("cogs_run")
    config = load_config(config_path("seq2seq", "cogs"))
    assert config["model_args"]["command_grammar"] is None
    assert (config["model_args"]["max_input_length"],
            config["model_args"]["max_output_length"]) == (64, 481)
    config["model_args"].update(TINY)
    config["training"].update(max_steps=2, eval_every=2, checkpoint_every=2, batch_size=8)
    config.update(model="seq2seq", split="cogs")
    keras.utils.set_random_seed(0)
    metrics = SCAN.train(SCAN.run_config(config), run_dir, seed=0, verbose=0,
                         evaluate_splits=("train", "validation", "gen"))
    return run_dir, metrics


def test_cogs_is_scored_on_dev_and_gen_with_categories(cogs_run):
    run_dir, metrics = cogs_run
    assert evaluated_splits("cogs") == ("train", "validation", "test", "gen")
    assert json.loads((run_dir / "metrics.json").read_text())["accuracy_by_category"] == (
        metrics["accuracy_by_category"])
    gen = metrics["accuracy_by_category"]["gen"]
    assert gen["overall"]["total"] == 21_000
    assert gen["overall"]["accuracy"] == metrics["accuracy"]["gen"]
    assert len(gen["categories"]) == 21
    assert {tally["total"] for tally in gen["categories"].values()} == {1_000}
    assert {group: tally["total"] for group, tally in gen["groups"].items()} == {
        "lexical": 18_000, "structural": 3_000}
    validation = metrics["accuracy_by_category"]["validation"]
    assert validation["overall"]["total"] == 3_000  # the official dev set
    assert set(validation["groups"]) == {"in_distribution"}
    # Train is scored on every 8th line, for decoding cost; its categories come along.
    train = metrics["accuracy_by_category"]["train"]
    assert train["overall"]["total"] == 3_020 == len(cogs.cogs_examples("cogs")["train"][::8])
    assert train["categories"]["in_distribution"]["total"] == sum(
        c == "in_distribution" for _, _, c in cogs.cogs_examples("cogs")["train"][::8])
    # Each error record names its category: as many per category as it got wrong.
    records = [json.loads(line) for line in
               (run_dir / "errors_gen.jsonl").read_text().splitlines()]
    wrong = Counter(record["category"] for record in records)
    assert wrong == {c: t["total"] - t["correct"] for c, t in gen["categories"].items()
                     if t["total"] > t["correct"]}
    by_category = run_errors(run_dir, "gen")["kinds_by_category"]
    assert {c: sum(kinds.values()) for c, kinds in by_category.items()} == dict(wrong)


def test_evaluate_scores_a_cogs_run_on_gen_and_refuses_a_part_it_lacks(cogs_run, capsys):
    from compgen_tf.cli import evaluate

    run_dir, metrics = cogs_run
    assert evaluate.main(["--run", str(run_dir), "--splits", "gen"]) == 0
    rescored = json.loads((run_dir / "metrics.json").read_text())
    assert rescored["accuracy"]["gen"] == metrics["accuracy"]["gen"]
    assert rescored["accuracy_by_category"]["gen"] == metrics["accuracy_by_category"]["gen"]
    capsys.readouterr()
    assert evaluate.main(["--run", str(run_dir), "--splits", "daxy"]) == 2
    assert capsys.readouterr().err == ("error: --splits: daxy is not a part of this run (its "
                                       "parts: train, validation, test, gen)\n")


def test_a_cogs_model_exports_and_answers_each_row(cogs_run, tmp_path):
    run_dir, _ = cogs_run
    model = load_run_model(run_dir)
    export_dir = export_model(model, tmp_path / "1")
    serve = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    sentences = [s for s, _, _ in cogs.cogs_examples("cogs")["gen"][:3]]
    rows = sentences + ["A gardner smiled .", "", " ".join(["the"] * 65)]
    out = serve(commands=tf.constant(rows))
    served = ([a.decode() for a in out["actions"].numpy()],
              [e.decode() for e in out["error"].numpy()])
    assert model.translate(sentences, return_errors=True) == (served[0][:3], served[1][:3])
    assert "unknown word(s):" in served[1][3] and "gardner" in served[1][3]
    assert served[1][4] == "empty command"
    assert served[1][5].startswith("command too long: 65 words")
    assert served[0][3:] == ["", "", ""]


def test_a_model_fitted_on_cogs_pairs_serves_their_logical_forms(tmp_path):
    # The four training lines with the shortest logical forms, learnt exactly by a tiny model.
    pairs = sorted(((s, t) for s, t, _ in cogs.cogs_examples("cogs")["train"]),
                   key=lambda pair: (len(pair[1].split()), pair))[:4]
    keras.utils.set_random_seed(0)
    model = AttentionSeq2Seq.from_words(vocabulary_words(s for s, _ in pairs),
                                        vocabulary_words(t for _, t in pairs),
                                        embedding_dim=16, hidden_units=16, max_output_length=12)
    split = encode_split(model, pairs)
    settings = {"batch_size": 4, "learning_rate": 0.03, "clip_norm": 5.0, "max_steps": 300,
                "eval_every": 25, "checkpoint_every": 1000, "patience": 100,
                "stop_at_accuracy": 1.0}
    summary = fit_split(model, settings, tmp_path / "run", split, split, seed=0, verbose=0)
    assert summary["best_val_accuracy"] == 1.0, summary
    best = keras.saving.load_model(tmp_path / "run" / "best_model.keras")
    serve = tf.saved_model.load(str(export_model(best, tmp_path / "export" / "1"))
                                ).signatures["serving_default"]
    out = serve(commands=tf.constant([s for s, _ in pairs] + ["Emma gardner ."]))
    assert [a.decode() for a in out["actions"].numpy()] == [t for _, t in pairs] + [""]
    errors = [e.decode() for e in out["error"].numpy()]
    assert errors[:4] == [""] * 4 and "gardner" in errors[4]
