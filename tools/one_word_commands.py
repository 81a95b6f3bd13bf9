"""How a trained SCAN model answers the one-word commands of its own training file.

    python scripts/one_word_commands.py --run RUN_DIR [--out FILE]

Syntactic Attention's first add-jump failure mode ("a one-word command means I_JUMP",
docs/syntactic_attention.md) shows on training commands: the model answers every one-word
command from a boundary token, so the bare verbs of the training file (`walk`, `run`,
`look`) come out as I_JUMP. Their few copies barely move validation exact match, so this
script asks them directly: it translates every one-word command of the run's training file
(fit and validation parts: the whole file, never the test set) and records the attention of
the first output step on `<sos>`, the word and `<eos>`. Written for the design study of
docs/dev_splits.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def one_word_translations(run_dir: Path):
    """(config, model, rows): every one-word command of the run's training file (fit and
    validation parts, never the test set) with its expected and greedy translation and
    the attention of the first output step on `<sos>`, the word and `<eos>`."""
    import numpy as np
    import tensorflow as tf

    from compgen_tf.experiments.experiment import load_run_model
    from compgen_tf.experiments.scan import split_examples

    config = json.loads((run_dir / "config.json").read_text())
    # "train" is the whole training file (fit and validation parts), never the test set.
    examples = {command: actions for command, actions in
                split_examples(config["split"], "train", config["data"], config["seed"])
                if len(command.split()) == 1}
    if not examples:
        raise SystemExit(f"{run_dir}: its training file has no one-word command")
    model = load_run_model(run_dir)
    if not getattr(model, "source_starts_with_sos", False):
        raise SystemExit(f"{run_dir}: the attention columns read <sos> word <eos> only for a "
                         "model that wraps its commands in <sos> ... <eos>")
    commands = sorted(examples)
    translations = model.translate(commands)
    ids, _ = model.encode_commands(tf.constant(commands))
    _, attention = model.greedy_decode_with_attention(ids, 1)
    first = np.asarray(attention)[:, 0, :3]  # <sos>, the word, <eos>
    rows = [{"command": c, "expected": examples[c], "translation": t,
             "correct": t == examples[c],
             "first_step_attention": dict(zip(("<sos>", "word", "<eos>"),
                                              (round(float(a), 4) for a in weights)))}
            for c, t, weights in zip(commands, translations, first)]
    return config, model, rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)

    config, _, rows = one_word_translations(args.run)
    history = (args.run / "history.jsonl").read_text().splitlines()
    record = {"run": str(args.run), "split": config["split"], "seed": config["seed"],
              "steps_trained": json.loads(history[-1])["step"] if history else 0,
              "model": "best_model.keras (best validation so far)",
              "best_step": max(map(json.loads, history), key=lambda r: r["val_accuracy"])["step"]
              if history else None,
              "correct": sum(r["correct"] for r in rows), "of": len(rows), "commands": rows,
              "command": f"python scripts/one_word_commands.py --run {args.run}"}
    for row in rows:
        print(f"{row['command']:>6} -> {row['translation']:<8} "
              f"{'ok' if row['correct'] else 'WRONG'}  first-step attention "
              + " ".join(f"{k} {v:.2f}" for k, v in row["first_step_attention"].items()))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
