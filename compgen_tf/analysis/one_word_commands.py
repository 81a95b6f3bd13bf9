"""How a trained SCAN model answers the one-word commands of its own training file.

Syntactic Attention's first add-jump failure mode ("a one-word command means I_JUMP",
docs/syntactic_attention.md) shows on training commands: the model answers every one-word
command from a boundary token, so the bare verbs of the training file (`walk`, `run`,
`look`) come out as I_JUMP. Their few copies barely move validation exact match, so
`one_word_translations` asks them directly (`tools/one_word_commands.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

from compgen_tf.analysis.errors import AnalysisError


def one_word_translations(run_dir: Path):
    """Every one-word command of a run's training file, translated by the run's model.

    Args:
        run_dir: a finished run of a SCAN model that wraps its commands in
            `<sos> ... <eos>`.

    Returns:
        (config, model, rows): the run's `config.json`, its model and, per one-word command
        of its training file (fit and validation parts, never the test set), its expected
        and greedy translation, whether they agree, and the attention of the first output
        step on `<sos>`, the word and `<eos>`.

    Raises:
        AnalysisError: the training file has no one-word command, or the model does not
            wrap its commands in `<sos> ... <eos>`.
    """
    import numpy as np
    import tensorflow as tf

    from compgen_tf.experiments.experiment import load_run_model
    from compgen_tf.experiments.scan import split_examples

    run_dir = Path(run_dir)
    config = json.loads((run_dir / "config.json").read_text())
    # "train" is the whole training file (fit and validation parts), never the test set.
    examples = {command: actions for command, actions in
                split_examples(config["split"], "train", config["data"], config["seed"])
                if len(command.split()) == 1}
    if not examples:
        raise AnalysisError(f"{run_dir}: its training file has no one-word command")
    model = load_run_model(run_dir)
    if not getattr(model, "source_starts_with_sos", False):
        raise AnalysisError(f"{run_dir}: the attention columns read <sos> word <eos> only for "
                            "a model that wraps its commands in <sos> ... <eos>")
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


def one_word_record(run_dir: Path, config: dict, rows: list, command: str) -> dict:
    """The file `tools/one_word_commands.py` writes for a run.

    Args:
        run_dir: the run.
        config: its `config.json`.
        rows: `one_word_translations`'s rows.
        command: the tool's command line.

    Returns:
        The run, split, seed, steps trained and best step (from `history.jsonl`), how many
        of the one-word commands are right, the rows and the command.
    """
    history = (Path(run_dir) / "history.jsonl").read_text().splitlines()
    return {"run": str(run_dir), "split": config["split"], "seed": config["seed"],
            "steps_trained": json.loads(history[-1])["step"] if history else 0,
            "model": "best_model.keras (best validation so far)",
            "best_step": max(map(json.loads, history), key=lambda r: r["val_accuracy"])["step"]
            if history else None,
            "correct": sum(r["correct"] for r in rows), "of": len(rows), "commands": rows,
            "command": command}
