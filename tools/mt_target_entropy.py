"""What a translation model's training loss would be if it ignored its source (issue 73).

    python tools/mt_target_entropy.py [--split mt_eng_fra_daxy] --out results/checks/FILE.json

The per-token cross-entropy, in nats, of the split's fit targets (`<eos>` counted as a
token, as the training loss counts it) under two models that never read the source: each
token's frequency (unigram entropy) and each token's frequency after the token before it
(bigram conditional entropy, the first token after `<sos>`). A training loss that stays at
the first does not even use the target prefix; one at the second uses the prefix but not
the sentence to translate. The fit part is the one the MT configurations train on: train less
the seeded 20% validation carve (validation_fraction 0.2, validation_seed 0).
"""

from __future__ import annotations

import argparse
import collections
import json
import math
import sys
from pathlib import Path

import tfds_scan


def target_entropies(split: str, validation_fraction: float = 0.2,
                     validation_seed: int = 0) -> dict:
    """Unigram and bigram conditional entropies (nats per token) of `split`'s fit targets."""
    pairs = tfds_scan.load_pairs(split, "fit", validation_fraction=validation_fraction,
                                 validation_seed=validation_seed)
    unigrams, bigrams, contexts = collections.Counter(), collections.Counter(), collections.Counter()
    for _, target in pairs:
        tokens = target.split() + ["<eos>"]
        unigrams.update(tokens)
        for previous, token in zip(["<sos>"] + tokens, tokens):
            bigrams[previous, token] += 1
            contexts[previous] += 1
    total = sum(unigrams.values())
    return {
        "split": split, "part": "fit", "validation_fraction": validation_fraction,
        "validation_seed": validation_seed, "pairs": len(pairs), "target_tokens": total,
        "unigram_entropy_nats": -sum(n / total * math.log(n / total)
                                     for n in unigrams.values()),
        "bigram_conditional_entropy_nats": -sum(n / total * math.log(n / contexts[p])
                                                for (p, _), n in bigrams.items()),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="mt_eng_fra_daxy")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    try:
        counts = target_entropies(args.split)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    report = {"what": "Per-token entropy of the fit targets under source-blind models "
                      "(tools/mt_target_entropy.py)",
              "command": f"python tools/mt_target_entropy.py --split {args.split}",
              "provenance": {"kind": "check",
                             "reason": "counts of the training targets; nothing chosen on them"},
              **counts}
    text = json.dumps(report, indent=2) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
