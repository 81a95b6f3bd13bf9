"""Does an exported SavedModel translate as its run did? Exact match through the export, and
row-by-row agreement with the run's model in Python.

The SavedModel is loaded with `tf.saved_model.load` (the signature's graph, as TF Serving runs
it, no Keras objects) and sent commands in batches of strings through its `serving_default`
signature (`tools/export_exact_match.py`).
"""

from __future__ import annotations

import json
from pathlib import Path

# Rows of disagreement kept as examples in a report.
EXAMPLES = 5
# What a comparison with the run is: no setting is chosen with it.
PROVENANCE = {"kind": "check", "reason": "an export compared with the run it was exported "
                                         "from, row by row; chooses nothing"}


def translate_through(signature, commands, batch):
    """The actions and per-row errors of `commands` from a `serving_default` signature.

    Args:
        signature: a loaded `serving_default` signature (or anything called as
            `signature(commands=<string tensor>)` returning `{"actions", "error"}`).
        commands: the commands, Python strings.
        batch: commands sent at once.

    Returns:
        (actions, errors): two lists of Python strings, one entry per command; an error is
        empty for a row translated without one.
    """
    import tensorflow as tf

    from compgen_tf.models.seq2seq_model import output_rows

    actions, errors = [], []
    for start in range(0, len(commands), batch):
        rows = output_rows(signature(commands=tf.constant(commands[start:start + batch],
                                                          tf.string)))
        actions += rows[0]
        errors += rows[1]
    return actions, errors


def agreement(commands, served, translated) -> dict:
    """Row-by-row comparison of two sets of answers to the same commands.

    Args:
        commands: the commands.
        served: (actions, errors) from the SavedModel (`translate_through`).
        translated: (actions, errors) from the model in Python
            (`model.translate(commands, return_errors=True)`).

    Returns:
        `{"rows", "rows_differing", "actions_differing", "errors_differing", "examples"}`:
        the counts of rows whose action string, error or either differ, and the first
        `EXAMPLES` differing rows as {command, served, translated}.
    """
    rows = list(zip(commands, zip(*served), zip(*translated)))
    differing = [row for row in rows if row[1] != row[2]]
    return {"rows": len(rows), "rows_differing": len(differing),
            "actions_differing": sum(s[0] != t[0] for _, s, t in rows),
            "errors_differing": sum(s[1] != t[1] for _, s, t in rows),
            "examples": [{"command": c, "served": dict(zip(("actions", "error"), s)),
                          "translated": dict(zip(("actions", "error"), t))}
                         for c, s, t in differing[:EXAMPLES]]}


def exact_match_through(export_dir, pairs, batch, model=None) -> dict:
    """Scores an exported SavedModel on (command, actions) pairs.

    Args:
        export_dir: a SavedModel directory with a `serving_default` string signature.
        pairs: the (command, actions) pairs of a split's part.
        batch: commands sent at once.
        model: None, or the run's model: every command is then also translated in Python
            (`translate(..., return_errors=True)`, in batches of `batch`) and compared with
            the SavedModel's answer, action string and error.

    Returns:
        `{"commands", "exact_match", "rows_with_error"}`, and with a `model`
        `"python_agreement"` (`agreement`).
    """
    import tensorflow as tf

    signature = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
    commands = [c for c, _ in pairs]
    actions, errors = translate_through(signature, commands, batch)
    right = sum(got == expected for got, (_, expected) in zip(actions, pairs))
    result = {"commands": len(pairs), "exact_match": right / len(pairs),
              "rows_with_error": sum(bool(e) for e in errors)}
    if model is not None:
        result["python_agreement"] = agreement(
            commands, (actions, errors),
            model.translate(commands, batch_size=batch, return_errors=True))
    return result


def run_to_compare(run_dir, split, part):
    """The run an export is compared with (`exact_match_through(..., model=)`).

    Args:
        run_dir: the run directory the SavedModel was exported from.
        split: the split the export is scored on: the run must have been trained on it.
        part: "test" or "train" (the whole training file).

    Returns:
        (the run's best model, `{"run", "run_command", "run_exact_match", "provenance"}`):
        the command that trained it and its own test score (None for "train": the run
        scores its fit part, not the whole training file).

    Raises:
        FileNotFoundError: `run_dir` has no `config.json` or no best model.
        ValueError: the run was trained on another split.
    """
    from compgen_tf.experiments.experiment import load_run_model

    config_path = Path(run_dir) / "config.json"
    if not config_path.is_file():
        raise FileNotFoundError(f"{config_path} does not exist: is {run_dir} a training run?")
    trained_on = json.loads(config_path.read_text()).get("split")
    if trained_on != split:
        raise ValueError(f"{run_dir} was trained on {trained_on}, not on --split {split}")
    metrics_path = Path(run_dir) / "metrics.json"
    metrics = json.loads(metrics_path.read_text()) if metrics_path.is_file() else {}
    score = metrics.get("accuracy", {}).get("test") if part == "test" else None
    return load_run_model(run_dir), {"run": str(run_dir), "run_command": metrics.get("command"),
                                     "run_exact_match": score, "provenance": PROVENANCE}
