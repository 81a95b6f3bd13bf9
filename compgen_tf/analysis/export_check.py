"""Does an exported SavedModel translate as its run did? Exact match through the export.

The SavedModel is loaded with TensorFlow alone (as TF Serving does: no compgen_tf, no Keras
objects) and sent commands in batches of strings through its `serving_default` signature
(`tools/export_exact_match.py`).
"""

from __future__ import annotations


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

    actions, errors = [], []
    for start in range(0, len(commands), batch):
        answer = signature(commands=tf.constant(commands[start:start + batch]))
        actions += [a.decode() for a in answer["actions"].numpy()]
        errors += [e.decode() for e in answer["error"].numpy()]
    return actions, errors


def exact_match_through(export_dir, pairs, batch) -> dict:
    """Scores an exported SavedModel on (command, actions) pairs.

    Args:
        export_dir: a SavedModel directory with a `serving_default` string signature.
        pairs: the (command, actions) pairs of a split's part.
        batch: commands sent at once.

    Returns:
        `{"commands", "exact_match", "rows_with_error"}`.
    """
    import tensorflow as tf

    signature = tf.saved_model.load(export_dir).signatures["serving_default"]
    actions, errors = translate_through(signature, [c for c, _ in pairs], batch)
    right = sum(got == expected for got, (_, expected) in zip(actions, pairs))
    return {"commands": len(pairs), "exact_match": right / len(pairs),
            "rows_with_error": sum(bool(e) for e in errors)}
