"""Checks `compgen_tf.training.bleu` against sacreBLEU and NLTK on the MT test set.

    python tools/check_bleu_against_references.py [--trials 20] [--out FILE]

Needs `sacrebleu` and `nltk`, which the library does not depend on (run it from an
environment that has them beside the installed package). Each trial perturbs the test
targets at random (words dropped, words appended, one-word outputs) and scores the perturbed
corpus four ways:
ours and sacreBLEU (`tokenize="none"`, no smoothing) against each pair's own target, ours
(NLTK convention) and NLTK's `corpus_bleu` against every target of an identical source, as
the Syntactic Attention authors' script does. It reports the largest differences.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from tfds_scan.mt import DATA_DIR


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--out")
    args = parser.parse_args()
    # Imported after parsing, so that --help works without the two reference packages.
    import sacrebleu
    from nltk.translate.bleu_score import corpus_bleu as nltk_reference

    from compgen_tf.training import bleu

    lines = (DATA_DIR / "test.txt").read_text().splitlines()
    pairs = [line[len("IN: "):].split(" OUT: ") for line in lines]
    by_source = {}
    for source, target in pairs:
        by_source.setdefault(source, []).append(target)
    rng = random.Random(0)
    worst = {"sacrebleu": 0.0, "nltk": 0.0}
    for _ in range(args.trials):
        hypotheses = []
        for _, target in pairs:
            words = target.split()
            if rng.random() < 0.3:
                words = [w for w in words if rng.random() > 0.3]
            if rng.random() < 0.2:
                words += rng.choice(pairs)[1].split()[:2]
            if rng.random() < 0.05:
                words = words[:1]
            hypotheses.append(" ".join(words))
        ours = bleu.corpus_bleu(hypotheses, [[t] for _, t in pairs])
        theirs = sacrebleu.corpus_bleu(hypotheses, [[t for _, t in pairs]], tokenize="none",
                                       smooth_method="none", force=True).score
        worst["sacrebleu"] = max(worst["sacrebleu"], abs(ours - theirs))
        references = [by_source[s] for s, _ in pairs]
        ours = bleu.nltk_corpus_bleu(hypotheses, references)
        theirs = 100 * nltk_reference([[r.split() for r in refs] for refs in references],
                                      [h.split() for h in hypotheses])
        worst["nltk"] = max(worst["nltk"], abs(ours - theirs))
    result = {"trials": args.trials, "sentences": len(pairs),
              "max_abs_difference": worst, "sacrebleu": sacrebleu.__version__,
              "nltk": __import__("nltk").__version__}
    print(json.dumps(result))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
