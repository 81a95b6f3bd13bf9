"""A trained Syntactic Attention run scored again with `syntax_tying="bare_words"` applied.

    python tools/syntax_tie_posthoc.py --run RUN_DIR [--out FILE]

Tying never changes training when the tied words appear only as one-word commands: the
shift hides a word from its own position and a one-word command reads only the boundary
vectors, so no training step reads a tied row (tests/test_syntactic_attention.py). A run of
`default.json` is therefore, weight for weight, the run that `syntax_tie.json` would have
trained with the same seed; only what the model reads for a tied word in a new context
differs. This script takes the run's best model, ties the words that its own training
commands show only alone (`bare_word_ties`), and scores validation and test both ways.
A diagnostic for the dev-split study (docs/dev_splits.md); the candidate's reported
results come from its own training runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    from compgen_tf.experiments.experiment import load_run_model
    from compgen_tf.experiments.scan import split_examples
    from compgen_tf.models import SyntacticAttention
    from compgen_tf.models.syntactic_attention.syntactic_attention import bare_word_ties
    from compgen_tf.training.data import encode_split
    from compgen_tf.training.evaluation import evaluate_split

    config = json.loads((args.run / "config.json").read_text())
    model = load_run_model(args.run)
    if not isinstance(model, SyntacticAttention) or model.syntax_tied_words:
        raise SystemExit(f"{args.run}: expected an untied Syntactic Attention run")
    parts = {part: split_examples(config["split"], part, config["data"], config["seed"])
             for part in ("train", "validation", "test")}
    tied_words, lenders = bare_word_ties(c for c, _ in parts["train"])
    if not tied_words:
        raise SystemExit(f"{args.run}: its training commands tie no word")
    # The same parts, the backbone with the tied rows (the architecture lives on it).
    ids = model.preprocessor.source_id
    backbone = type(model.backbone).from_config(dict(
        model.backbone.get_config(), syntax_tied_ids=[ids(w) for w in tied_words],
        syntax_lender_ids=[ids(w) for w in lenders]))
    preprocessor = type(model.preprocessor).from_config(model.preprocessor.get_config())
    tied = SyntacticAttention(backbone, preprocessor, max_output_length=model.max_output_length)
    tied.set_weights(model.get_weights())
    scores = {}
    for part in ("validation", "test"):
        split = encode_split(model, parts[part])
        scores[part] = {"untied": evaluate_split(model, split).accuracy,
                        "tied": evaluate_split(tied, split).accuracy}
    record = {"run": str(args.run), "config": config.get("model_args"), "split": config["split"],
              "seed": config["seed"], "tied_words": tied_words, "lender_words": lenders,
              "accuracy": scores,
              "command": f"python tools/syntax_tie_posthoc.py --run {args.run}"}
    text = json.dumps(record, indent=2) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(json.dumps({"split": record["split"], "seed": record["seed"], "accuracy": scores}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
