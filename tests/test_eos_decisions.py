"""`compgen_tf.analysis.eos_decisions` on hand-made distributions, outputs and attention, and
its tool on a trained translation run's kept model."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

from compgen_tf.analysis.eos_decisions import (attention_past_reference, eos_at_reference_end,
                                               reference_lengths, repeating_tail)
from compgen_tf.tokens import EOS_ID, PAD_ID, SOS_ID

ROOT = Path(__file__).resolve().parents[1]


def one_hot_steps(tokens, vocabulary=8, on=1.0):
    """(T, vocabulary) distributions, each step's mass `on` on its token, the rest spread."""
    steps = np.full((len(tokens), vocabulary), (1.0 - on) / (vocabulary - 1))
    steps[np.arange(len(tokens)), tokens] = on
    return steps


def test_reference_lengths_count_tokens_before_eos_and_refuse_a_row_without_one():
    assert reference_lengths(np.array([[5, 6, 7, EOS_ID], [4, EOS_ID, PAD_ID, PAD_ID]])).tolist() \
        == [3, 1]
    with pytest.raises(ValueError, match="must end with <eos>"):
        reference_lengths(np.array([[5, 6, PAD_ID]]))


def test_eos_decisions_at_and_before_the_reference_end():
    # Row 0 predicts its reference (4 5, then <eos>); row 1 says <eos> at its first step and
    # the word 6 where its reference ends, with <eos> third most likely there.
    targets = np.array([[4, 5, EOS_ID, PAD_ID], [6, 7, 4, EOS_ID]])
    first = one_hot_steps([4, 5, EOS_ID, PAD_ID])
    second = one_hot_steps([EOS_ID, 7, 4, 6], on=0.5)
    second[3] = 0.0
    second[3, [6, 4, EOS_ID, 7]] = [0.4, 0.3, 0.2, 0.1]  # 6 first, 4 second, <eos> third
    out = eos_at_reference_end(np.stack([first, second]), targets)
    assert out["eos_rank_at_end"].tolist() == [0, 2]
    np.testing.assert_allclose(out["p_eos_at_end"], [1.0, 0.2])
    assert out["premature_eos_steps"].tolist() == [0, 1]
    assert out["top_token_at_end"].tolist() == [EOS_ID, 6]


@pytest.mark.parametrize("tokens, period", [
    ("il est la la la".split(), 1),
    ("je suis tres tres".split(), 0),  # two repeats are not a loop
    ("a b c d b c d b c d".split(), 3),
    ("a b a b a c".split(), 0),  # the end does not repeat
    ([], 0),
])
def test_repeating_tail_finds_the_shortest_period_of_a_loop_at_the_end(tokens, period):
    assert repeating_tail(tokens) == period


def test_repeating_tail_limits():
    loop = "x y z w v".split() * 3
    assert repeating_tail(loop) == 5
    assert repeating_tail(loop, max_period=4) == 0
    assert repeating_tail(loop[:10], min_repeats=2) == 5


def test_attention_past_the_reference_by_source_position():
    # <sos> i am . <eos>: 6 emitted steps, a reference of 2; steps 2-5 read ".", <eos>, <sos>
    # and "am".
    source = np.array([SOS_ID, 9, 10, 11, EOS_ID, PAD_ID])
    attention = np.zeros((8, 6))
    attention[np.arange(8), [1, 2, 3, 4, 0, 2, 3, 3]] = 1.0
    counts = attention_past_reference(attention, source, output_length=6, reference_length=2)
    assert counts == {"last_word": 1, "source_eos": 1, "source_sos": 1, "other_word": 1,
                      "steps": 4}
    # Without <sos> (the baseline's layout) position 0 is the first word, not a boundary:
    # i am . <eos>, steps 2-5 reading ".", <eos>, "i" and "am".
    no_sos = np.eye(5)[[0, 1, 2, 3, 0, 1, 2, 2]]  # each step's source position, one-hot
    counts = attention_past_reference(no_sos, source[1:], output_length=6, reference_length=2)
    assert counts == {"last_word": 1, "source_eos": 1, "source_sos": 0, "other_word": 2,
                      "steps": 4}
    # An output no longer than its reference has no steps past it.
    assert attention_past_reference(attention, source, 2, 2)["steps"] == 0


def _tool():
    spec = importlib.util.spec_from_file_location("mt_eos_decisions",
                                                  ROOT / "tools" / "mt_eos_decisions.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool


def test_the_tool_reads_a_translation_run_and_refuses_a_scan_run(tmp_path, capsys):
    from test_mt import untrained_daxy_run

    run = untrained_daxy_run(tmp_path)
    out, figure = tmp_path / "eos.json", tmp_path / "eos.png"
    assert _tool().main(["--run", str(run), "--part", "daxy", "--examples", "2",
                         "--out", str(out), "--figure", str(figure)]) == 0
    run_report = json.loads(out.read_text())["per_run"][0]
    # The 8 daxy sentences, each in exactly one outcome; every count within its total.
    assert run_report["sentences"] == 8 and run_report["part"] == "daxy"
    assert sum(s["sentences"] for s in run_report["by_outcome"].values()) == 8
    summary = run_report["summary"]
    assert 0 <= summary["eos_wins_at_reference_end"] <= 8
    assert summary["run_on"] == run_report["by_outcome"]["run_on"]["sentences"]
    past = summary["attention_past_reference_length"]
    assert past["steps"] == sum(v for k, v in past.items() if k != "steps")
    assert run_report["examples"] and figure.stat().st_size > 0
    for example in run_report["examples"]:
        weights = np.array(example["attention"])
        assert weights.shape == (len(example["output"]), len(example["source"]))
        assert example["source"][0] == "<sos>" and example["source"][-1] == "<eos>"
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-2)
        assert len(example["decoded_to_reference_length"]) == example["reference_length"]
    bleu = run_report["bleu"]
    assert bleu["free_in_run_metrics"] is None  # this run's metrics.json has no BLEU
    assert all(0.0 <= bleu[way] <= 100.0 for way in
               ("free", "free_cut_to_reference_length", "decoded_to_reference_length"))
    # A SCAN run has no references to translate: one line, exit 1.
    scan = tmp_path / "scan"
    scan.mkdir()
    (scan / "metrics.json").write_text("{}")
    (scan / "config.json").write_text(json.dumps({"model": "seq2seq", "split": "simple"}))
    capsys.readouterr()
    assert _tool().main(["--run", str(scan)]) == 1
    assert capsys.readouterr().err.strip() == \
        f"error: {scan}: a run on 'simple', not a translation split"
