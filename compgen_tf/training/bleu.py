"""Corpus BLEU (Papineni et al. 2002) on whitespace tokens, two conventions.

`corpus_bleu` is BLEU as sacreBLEU computes it on text that is already tokenized
(`tokenize="none"`): n-gram precisions summed over the corpus, clipped by the reference
counts, geometric mean of orders 1-4, brevity penalty from the total hypothesis and reference
lengths. `nltk_corpus_bleu` follows NLTK's `corpus_bleu`, which the Syntactic Attention
authors' `evaluate_bleu.py` calls: the same formula, except that a hypothesis shorter than n
words adds 1 (not 0) to the order-n denominator, and with several references a sentence's
reference length is the one closest to its hypothesis (the shorter on a tie). No smoothing in
either: a corpus with no matching n-gram of some order scores 0 (sacreBLEU's default
"exp" smoothing differs only then).

Both return a score in [0, 100].
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

MAX_ORDER = 4


def _tokens(text) -> list[str]:
    return text.split() if isinstance(text, str) else list(text)


def _ngrams(tokens: list[str], n: int) -> Counter:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def _score(hypotheses, references, nltk_denominators: bool) -> float:
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} reference lists")
    if not hypotheses:
        raise ValueError("BLEU of an empty corpus is undefined")
    matches, totals = [0] * MAX_ORDER, [0] * MAX_ORDER
    hypothesis_length = reference_length = 0
    for hypothesis, options in zip(hypotheses, references):
        hypothesis = _tokens(hypothesis)
        options = [_tokens(r) for r in options]
        if not options:
            raise ValueError("every hypothesis needs at least one reference")
        for n in range(1, MAX_ORDER + 1):
            counts = _ngrams(hypothesis, n)
            most = Counter()
            for reference in options:
                most |= _ngrams(reference, n)  # the largest count of each n-gram
            matches[n - 1] += sum(min(c, most[g]) for g, c in counts.items())
            total = sum(counts.values())
            totals[n - 1] += max(1, total) if nltk_denominators else total
        hypothesis_length += len(hypothesis)
        reference_length += min((abs(len(r) - len(hypothesis)), len(r)) for r in options)[1]
    if hypothesis_length == 0 or 0 in matches:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals)) / MAX_ORDER
    brevity = min(0.0, 1.0 - reference_length / hypothesis_length)
    return 100.0 * math.exp(brevity + log_precision)


def corpus_bleu(hypotheses: Sequence, references: Sequence[Sequence]) -> float:
    """sacreBLEU's corpus BLEU on pre-tokenized text (`tokenize="none"`, no smoothing).

    Args:
        hypotheses: one string (or token list) per sentence.
        references: for each sentence, a list of reference strings (or token lists).

    Example:
        >>> round(corpus_bleu(["the cat sat on the mat"], [["the cat sat on a mat"]]), 2)
        53.73
    """
    return _score(hypotheses, references, nltk_denominators=False)


def nltk_corpus_bleu(hypotheses: Sequence, references: Sequence[Sequence]) -> float:
    """NLTK's `corpus_bleu` × 100 (default weights, no smoothing), as the authors' script uses it."""
    return _score(hypotheses, references, nltk_denominators=True)


# The authors' script leaves out targets of fewer than 4 words (`len(true_actions[0]) < 6`
# with <SOS> and <EOS> counted).
AUTHORS_MIN_TARGET_WORDS = 4


def translation_scores(sources: Sequence[str], targets: Sequence[str],
                       predictions: Sequence[str]) -> dict:
    """BLEU of greedy translations of a split, two ways (each in [0, 100]).

    - `bleu`: sacreBLEU-style corpus BLEU of every pair, the prediction (free greedy
      decoding, up to the model's output budget, cut at `<eos>`) against that pair's target.
    - `bleu_authors`: as the Syntactic Attention authors' `evaluate_bleu.py` computes it:
      pairs whose target has fewer than 4 words left out; each remaining pair's prediction
      cut to the decoding budget the script gives every sentence of a split (its longest
      target plus `<eos>`, since it sets the model's `max_len` to the split's longest
      target) and scored against every target of an identical source in the split, with
      NLTK's conventions (`nltk_corpus_bleu`).

    Args:
        sources, targets: the split's pairs, as strings.
        predictions: the model's translation of each source, as a string.

    Example:
        >>> translation_scores(["i am ok ."], ["je vais bien ."], ["je vais bien ."])
        {'bleu': 100.0, 'bleu_authors': 100.0, 'pairs_scored_authors': 1}
    """
    if not len(sources) == len(targets) == len(predictions):
        raise ValueError(f"{len(sources)} sources, {len(targets)} targets and "
                         f"{len(predictions)} predictions: expected as many of each")
    free = corpus_bleu(predictions, [[t] for t in targets])
    references: dict[str, list[str]] = {}
    for source, target in zip(sources, targets):
        references.setdefault(source, []).append(target)
    budget = max(len(t.split()) for t in targets) + 1
    kept = [i for i, t in enumerate(targets) if len(t.split()) >= AUTHORS_MIN_TARGET_WORDS]
    authors = (nltk_corpus_bleu([predictions[i].split()[:budget] for i in kept],
                                [references[sources[i]] for i in kept]) if kept else 0.0)
    return {"bleu": free, "bleu_authors": authors, "pairs_scored_authors": len(kept)}
