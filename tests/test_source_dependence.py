"""`compgen_tf.analysis.source_dependence` on hand-made logits and attention."""

import numpy as np
import pytest

from compgen_tf.analysis.source_dependence import attention_mass, source_dependence, token_nats
from compgen_tf.tokens import EOS_ID, PAD_ID, SOS_ID


def test_token_nats_sum_the_reference_tokens_and_skip_padding():
    logits = np.log(np.array([[[0.5, 0.25, 0.25, 0.0 + 1e-30], [0.1, 0.1, 0.1, 0.7]]]))
    nats, tokens = token_nats(logits, np.array([[1, EOS_ID]]))
    assert tokens == 2
    assert nats == pytest.approx(-np.log(0.25) - np.log(0.7))
    nats, tokens = token_nats(logits, np.array([[1, PAD_ID]]))
    assert tokens == 1 and nats == pytest.approx(-np.log(0.25))


def copy_logits(source_ids, target_ids, vocabulary=12):
    """A model that predicts its source's word at each step (confidently), and one that
    predicts the same distribution whatever the source."""
    logits = np.full(target_ids.shape + (vocabulary,), -5.0)
    for row, source in enumerate(source_ids):
        words = [t for t in source if t not in (PAD_ID, SOS_ID, EOS_ID)] + [EOS_ID]
        for step in range(target_ids.shape[1]):
            logits[row, step, words[min(step, len(words) - 1)]] = 5.0
    return logits


def blind_logits(source_ids, target_ids, vocabulary=12):
    return np.zeros(target_ids.shape + (vocabulary,))


def test_a_model_that_reads_its_source_pays_for_another_ones_and_a_blind_one_does_not():
    sources = np.array([[SOS_ID, 5, 6, EOS_ID], [SOS_ID, 7, 8, EOS_ID], [SOS_ID, 9, EOS_ID, 0]])
    targets = np.array([[5, 6, EOS_ID], [7, 8, EOS_ID], [9, EOS_ID, PAD_ID]])
    reading = source_dependence(copy_logits, sources, targets)
    assert reading["tokens"] == 8
    assert reading["other"] - reading["own"] > 8 * 5.0  # every word now costs ~10 nats
    blind = source_dependence(blind_logits, sources, targets)
    assert blind["own"] == pytest.approx(blind["other"]) == pytest.approx(8 * np.log(12))
    with pytest.raises(ValueError, match="at least 2 rows"):
        source_dependence(blind_logits, sources[:1], targets[:1])


def test_attention_mass_by_kind_of_position_and_its_spread():
    # Row 0: <sos> a b . <eos> <pad>; step 0 on `a`, step 1 on `.`, step 2 on <eos>,
    # step 3 (not read) on <sos>. Row 1: <sos> c <eos>, uniform, both steps read.
    sources = np.array([[SOS_ID, 5, 6, 7, EOS_ID, PAD_ID], [SOS_ID, 8, EOS_ID, PAD_ID, PAD_ID,
                                                          PAD_ID]])
    attention = np.zeros((2, 4, 6))
    attention[0, 0, 1] = attention[0, 1, 3] = attention[0, 2, 4] = attention[0, 3, 0] = 1.0
    attention[1, :2, :3] = 1.0 / 3
    out = attention_mass(attention, sources, np.array([3, 2]))
    assert out["steps"] == 5
    assert out["other_words"] == pytest.approx(1.0)  # row 1's `c` is its last word
    assert out["last_word"] == pytest.approx(1.0 + 2 / 3)
    assert out["eos"] == pytest.approx(1.0 + 2 / 3)
    assert out["sos"] == pytest.approx(2 / 3)
    assert out["entropy_fraction"] == pytest.approx(2.0, abs=1e-6)  # row 1: uniform, twice


def test_the_tool_reads_a_translation_run(tmp_path):
    # An untrained tiny Syntactic Attention as a finished run's kept model, read on the 8
    # daxy sentences: the counts add up, the attention's shares sum to one.
    import importlib.util
    import json
    from pathlib import Path

    from tfds_scan import mt

    from test_mt import untrained_daxy_run

    run = untrained_daxy_run(tmp_path)
    daxy = mt.mt_examples("mt_eng_fra_daxy")["daxy"]
    spec = importlib.util.spec_from_file_location(
        "mt_source_dependence", Path(__file__).resolve().parents[1] / "tools" /
        "mt_source_dependence.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    out = tmp_path / "dependence.json"
    assert tool.main(["--run", str(run), "--part", "daxy", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["provenance"]["kind"] == "check"
    nats, attention = report["per_run"][0]["nats_per_token"], report["per_run"][0]["attention"]
    # 8 references of 4 to 6 words, each with its <eos>.
    assert nats["tokens"] == sum(len(target.split()) + 1 for _, target in daxy)
    assert nats["own_source"] > 0 and nats["another_sentence_source"] > 0
    assert sum(attention[k] for k in ("sos", "eos", "last_word", "other_words")) == \
        pytest.approx(1.0, abs=1e-3)
    assert 0.0 <= attention["entropy_fraction"] <= 1.0 and attention["steps_read"] > 0
