"""Corpus BLEU, both conventions, on cases worked out by hand.

(`tools/check_bleu_against_references.py` compares them with sacreBLEU and NLTK.)
"""

import math

import pytest

from compgen_tf.training.bleu import corpus_bleu, nltk_corpus_bleu, translation_scores


def test_one_sentence_by_hand():
    # Precisions 5/6 (one "the" clipped), 3/5, 2/4, 1/3; equal lengths: no brevity penalty.
    expected = 100 * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    for score in (corpus_bleu, nltk_corpus_bleu):
        assert score(["the cat sat on the mat"], [["the cat sat on a mat"]]) == \
            pytest.approx(expected, abs=1e-12)


def test_short_hypotheses_count_one_in_nltk_denominators():
    hypotheses = ["the cat sat on the mat", "on a"]
    references = [["the cat sat on a mat"], ["on a"]]
    # Summed over the corpus: 1-grams 7/8, 2-grams 4/6, 3-grams 2/4, 4-grams 1/3; NLTK adds
    # 1 to the 3- and 4-gram denominators for the two-word hypothesis.
    assert corpus_bleu(hypotheses, references) == pytest.approx(
        100 * (7 / 8 * 4 / 6 * 2 / 4 * 1 / 3) ** 0.25, abs=1e-12)
    assert nltk_corpus_bleu(hypotheses, references) == pytest.approx(
        100 * (7 / 8 * 4 / 6 * 2 / 5 * 1 / 4) ** 0.25, abs=1e-12)


def test_several_references_clip_by_the_largest_count_and_take_the_closest_length():
    hypothesis = "a a b c d"
    references = ["a b c d e f g", "a a x"]
    # "a" twice: the second reference allows two; lengths 7 (|7-5| = 2) and 3 (2): a tie,
    # the shorter wins, so no brevity penalty. 2-grams: "a a", "a b", "b c", "c d" all
    # appear in some reference; 3-grams: "a b c", "b c d" of 3; 4-grams: "a b c d" of 2.
    expected = 100 * (5 / 5 * 4 / 4 * 2 / 3 * 1 / 2) ** 0.25
    assert nltk_corpus_bleu([hypothesis], [references]) == pytest.approx(expected, abs=1e-12)
    # Only the longer reference: r = 7 > c = 5, brevity penalty exp(1 - 7/5).
    alone = 100 * math.exp(1 - 7 / 5) * (4 / 5 * 3 / 4 * 2 / 3 * 1 / 2) ** 0.25
    assert corpus_bleu([hypothesis], [references[:1]]) == pytest.approx(alone, abs=1e-12)


def test_no_match_of_some_order_scores_zero_and_bad_input_is_refused():
    assert corpus_bleu(["a b c"], [["a b d"]]) == 0.0  # no 3-gram in common
    assert corpus_bleu([""], [["a b"]]) == 0.0
    assert corpus_bleu(["x y z w"], [["x y z w"]]) == pytest.approx(100.0)
    with pytest.raises(ValueError, match="2 hypotheses but 1"):
        corpus_bleu(["a", "b"], [["a"]])
    with pytest.raises(ValueError, match="at least one reference"):
        corpus_bleu(["a"], [[]])


def test_translation_scores_both_ways():
    sources = ["i m ok .", "i m ok .", "he s wet .", "i m ill ."]
    targets = ["je vais bien .", "ca va .", "il est mouille .", "je suis malade ."]
    predictions = ["ca va .", "ca va .", "il est mouille .", "je suis malade . . ."]
    scores = translation_scores(sources, targets, predictions)
    # Free decoding: every pair against its own target.
    assert scores["bleu"] == pytest.approx(corpus_bleu(predictions, [[t] for t in targets]))
    # The authors' way: "ca va ." (3 words) is left out; "ca va ." for the first pair is
    # scored against both targets of "i m ok ."; predictions are cut to 4 + 1 words.
    assert scores["pairs_scored_authors"] == 3
    assert scores["bleu_authors"] == pytest.approx(nltk_corpus_bleu(
        ["ca va .", "il est mouille .", "je suis malade . ."],
        [["je vais bien .", "ca va ."], ["il est mouille ."], ["je suis malade ."]]))
    with pytest.raises(ValueError, match="expected as many of each"):
        translation_scores(sources, targets, predictions[:2])
