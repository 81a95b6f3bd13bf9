"""The SCAN models on the English-French set: training, evaluation with BLEU, export."""

import json

import keras
import tensorflow as tf

from compgen_tf.models.export import export_model
from compgen_tf.experiments.config import config_path, load_config
from compgen_tf.experiments.results import run_record
from compgen_tf.experiments.scan import SCAN
from compgen_tf.models.syntactic_attention.syntactic_attention import SyntacticAttention
from compgen_tf.training.data import encode_split
from compgen_tf.training.fit import fit_split
from compgen_tf.models.preprocessor import vocabulary_words
from tfds_scan import mt

TINY = dict(semantic_dim=16, syntax_embedding_dim=16, syntax_units=16, encoder_units=16,
            dropout=0.0)


def untrained_daxy_run(folder):
    """An untrained tiny Syntactic Attention, its vocabulary from the 8 daxy sentences, saved
    as a finished English-French run's kept model in `folder`/mt (the analyses of issue 73
    read what a model does, whatever it is)."""
    from compgen_tf import registry

    daxy = mt.mt_examples("mt_eng_fra_daxy")["daxy"]
    keras.utils.set_random_seed(0)
    model = registry.build_model("syntactic_attention", dict(TINY, command_grammar=None),
                                 vocabulary_words(s for s, _ in daxy),
                                 vocabulary_words(t for _, t in daxy))
    run = folder / "mt"
    run.mkdir()
    model.save(run / "best_model.keras")
    (run / "config.json").write_text(json.dumps({"model": "syntactic_attention",
                                                 "split": "mt_eng_fra_daxy", "seed": 0}))
    (run / "metrics.json").write_text("{}")
    return run


def test_syntactic_attention_learns_french_pairs_and_serves_them(tmp_path):
    # Twelve short French -> English training pairs from the shipped training file, one per
    # source sentence (the file translates some sentences two ways).
    pairs = list({s: (s, t) for s, t in mt.mt_examples("mt_fra_eng")["train"]
                  if len(s.split()) <= 4}.values())[:12]
    source = vocabulary_words(s for s, _ in pairs)
    target = vocabulary_words(t for _, t in pairs)
    keras.utils.set_random_seed(0)
    model = SyntacticAttention.from_words(source, target, max_output_length=8, **TINY)
    split = encode_split(model, pairs)
    settings = {"batch_size": 12, "learning_rate": 0.03, "clip_norm": 5.0, "max_steps": 600,
                "eval_every": 25, "checkpoint_every": 1000, "patience": 100,
                "stop_at_accuracy": 1.0}
    summary = fit_split(model, settings, tmp_path / "run", split, split, seed=0, verbose=0)
    assert summary["best_val_accuracy"] == 1.0, summary
    best = keras.saving.load_model(tmp_path / "run" / "best_model.keras")
    assert best.translate([s for s, _ in pairs]) == [t for _, t in pairs]

    export_model(best, tmp_path / "export" / "1")
    serve = tf.saved_model.load(str(tmp_path / "export" / "1")).signatures["serving_default"]
    out = serve(commands=tf.constant([pairs[0][0], "je suis daxiste ."]))
    assert [a.decode() for a in out["actions"].numpy()] == [pairs[0][1], ""]
    errors = [e.decode() for e in out["error"].numpy()]
    assert errors[0] == "" and "unknown word(s):" in errors[1] and "daxiste" in errors[1]


def test_a_translation_run_scores_bleu_and_lists_the_daxy_sentences(tmp_path, monkeypatch):
    import numpy as np

    from compgen_tf.experiments import scan
    from compgen_tf.training.bleu import translation_scores
    from compgen_tf.training.evaluation import SplitEvaluation

    config = load_config(config_path("syntactic_attention", "mt_eng_fra"))
    assert config["training"]["learning_rate"] == 0.00015
    assert config["model_args"]["command_grammar"] is None
    config["model_args"].update(TINY)
    config["training"].update(max_steps=2, eval_every=2, checkpoint_every=2)
    config.update(model="syntactic_attention", split="mt_eng_fra")
    # Trained without the daxy copies: "daxy" is a word training never saw, encoded <unk>.
    assert config["training"]["selection"] == "bleu"
    # Two steps translate nothing (BLEU 0 either way, which any pairing of the scores would
    # give): the final scoring's daxy translations are set here, half exact and half one word
    # short, so that the scores lie strictly between 0 and 100 and a score computed on other
    # pairs than the run's own translations shows. (Validation, during training, is not
    # patched: it decodes through `training.fit.split_validation`.)
    daxy_pairs = mt.mt_examples("mt_eng_fra")["daxy"]
    evaluate_split = scan.evaluate_split

    def known_translations(model, split, **kwargs):
        result = evaluate_split(model, split, **kwargs)
        if list(split.commands) != [s for s, _ in daxy_pairs]:
            return result
        predicted = [t if i % 2 == 0 else " ".join(t.split()[:-1])
                     for i, (_, t) in enumerate(daxy_pairs)]
        correct = np.array([p == t for p, (_, t) in zip(predicted, daxy_pairs)])
        return SplitEvaluation(float(correct.mean()), correct, predicted)

    monkeypatch.setattr(scan, "evaluate_split", known_translations)
    metrics = SCAN.train(SCAN.run_config(config), tmp_path, seed=0, verbose=0,
                         evaluate_splits=("daxy",))
    # Selected on validation BLEU: the history and the summary carry it.
    (line,) = [json.loads(text) for text in (tmp_path / "history.jsonl").read_text().splitlines()]
    assert 0.0 <= line["val_bleu"] <= 100.0 and metrics["best_val_bleu"] == line["val_bleu"]
    assert "best_val_accuracy" not in metrics
    daxy = metrics["bleu"]["daxy"]
    translations = daxy["translations"]
    assert [(t["source"], t["expected"]) for t in translations] == daxy_pairs
    # The reported scores are those of the run's own translations, both ways.
    recomputed = translation_scores([t["source"] for t in translations],
                                    [t["expected"] for t in translations],
                                    [t["predicted"] for t in translations])
    assert {key: daxy[key] for key in recomputed} == recomputed
    assert 0.0 < daxy["bleu"] < 100.0 and 0.0 < daxy["bleu_authors"] < 100.0
    assert daxy["pairs_scored_authors"] == 8  # every target has 4 tokens or more
    assert metrics["accuracy"]["daxy"] == 0.5
    assert metrics["accuracy"]["daxy"] == sum(t["exact"] for t in translations) / 8
    assert json.loads((tmp_path / "metrics.json").read_text())["bleu"]["daxy"] == daxy
    record = run_record({**metrics, "accuracy": {**metrics["accuracy"], "validation": 0.0,
                                                 "test": 0.0},
                         "bleu": {**metrics["bleu"], "test": {"bleu": 12.5, "bleu_authors": 13.0}}})
    assert (record["test_bleu"], record["test_bleu_authors"]) == (12.5, 13.0)
    assert record["daxy_exact"] == sum(t["exact"] for t in daxy["translations"])
    assert record["daxy_translations"] == [t["predicted"] for t in daxy["translations"]]
