"""Whether a translation model reads its source, and where its attention sits (issue 73).

Seed 1 of Syntactic Attention in the paper's regime on English-French never learns: its
training loss stays near what the target's token frequencies alone give, and it translates
every sentence as `je`. Two measurements say whether such a run ignores its source and how:

- **Source dependence** (`source_dependence`): the teacher-forced cross-entropy of each
  reference given its own source, and given the source of another sentence of the batch (the
  rows rolled by one). A model that reads its source pays for the wrong one; one that does
  not pays nothing.
- **Attention mass** (`attention_mass`): where the attention of the freely decoded steps
  goes: the source's `<sos>`, its `<eos>`, its last word (the full stop, in this set) or the
  other words, and how spread it is (its entropy over the sentence's positions, as a
  fraction of the uniform distribution's).

Nothing is selected with any of it: it reads a finished run's kept model.
"""

from __future__ import annotations

import numpy as np

from compgen_tf.tokens import EOS_ID, PAD_ID, SOS_ID


def token_nats(logits, target_ids) -> tuple[float, int]:
    """The summed cross-entropy (nats) of the reference tokens, `<eos>` included, and how many.

    Args:
        logits: float array (batch, T, vocabulary), teacher-forced.
        target_ids: int array (batch, T), references ending with `<eos>`, padded with `<pad>`.

    Returns:
        `(summed nats, number of tokens)` over the non-`<pad>` positions.

    Example:
        >>> logits = np.log(np.array([[[0.5, 0.5], [0.25, 0.75]]]))
        >>> nats, tokens = token_nats(logits, np.array([[1, 1]]))
        >>> round(nats, 4), tokens
        (0.9808, 2)
    """
    logits = np.asarray(logits, "float64")
    target_ids = np.asarray(target_ids)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_p, target_ids[..., None], axis=-1)[..., 0]
    real = target_ids != PAD_ID
    return float(-picked[real].sum()), int(real.sum())


def source_dependence(compute_logits, source_ids, target_ids) -> dict:
    """Teacher-forced nats per token with each row's own source and with another row's.

    Args:
        compute_logits: `(source_ids, target_ids) -> logits` (a model's `compute_logits`).
        source_ids, target_ids: int arrays (batch, S) and (batch, T), batch at least 2.

    Returns:
        `{"own", "other", "tokens"}`: summed nats with the own sources and with the sources
        rolled by one row, and the number of reference tokens.
    """
    source_ids = np.asarray(source_ids)
    if len(source_ids) < 2:
        raise ValueError(f"need at least 2 rows to swap sources, got {len(source_ids)}")
    own, tokens = token_nats(compute_logits(source_ids, target_ids), target_ids)
    other, _ = token_nats(compute_logits(np.roll(source_ids, 1, axis=0), target_ids),
                          target_ids)
    return {"own": own, "other": other, "tokens": tokens}


def attention_mass(attention, source_ids, steps) -> dict:
    """Where the attention of the first `steps[i]` output steps of each row goes.

    Args:
        attention: float array (batch, T, S), each step's distribution over source positions.
        source_ids: int array (batch, S): `<sos>`, the words, `<eos>`, `<pad>`.
        steps: int array (batch,), how many output steps of each row to read (its free
            output's length with its `<eos>`).

    Returns:
        `{"sos", "eos", "last_word", "other_words", "steps", "entropy_fraction"}`: the
        attention summed over the read steps on each kind of position, the number of read
        steps, and the summed entropy of those steps' distributions, each divided by the log
        of its sentence's number of positions (1: uniform, 0: one position).

    Example:
        >>> a = np.zeros((1, 2, 5)); a[0, :, 0] = 1.0
        >>> out = attention_mass(a, np.array([[2, 7, 8, 3, 0]]), np.array([2]))
        >>> out["sos"], out["steps"], out["entropy_fraction"]
        (2.0, 2, 0.0)
    """
    attention, source_ids = np.asarray(attention, "float64"), np.asarray(source_ids)
    out = {"sos": 0.0, "eos": 0.0, "last_word": 0.0, "other_words": 0.0, "steps": 0,
           "entropy_fraction": 0.0}
    for row, count in zip(range(len(source_ids)), np.asarray(steps)):
        source = source_ids[row]
        end = int(np.flatnonzero(source == EOS_ID)[0])  # the position of <eos>
        read = attention[row, :int(count), :end + 1]
        kinds = np.full(end + 1, "other_words", dtype=object)
        kinds[source[:end + 1] == SOS_ID] = "sos"
        kinds[end] = "eos"
        if end >= 2:
            kinds[end - 1] = "last_word"
        for kind in ("sos", "eos", "last_word", "other_words"):
            out[kind] += float(read[:, kinds == kind].sum())
        out["steps"] += int(count)
        if end >= 1 and count:
            p = np.clip(read, 1e-12, 1.0)
            out["entropy_fraction"] += float((-(p * np.log(p)).sum(axis=1)).sum()
                                             / np.log(end + 1))
    return out


def run_source_dependence(run_dir, part: str = "validation", batch_size: int = 64) -> dict:
    """`source_dependence` and `attention_mass` over `part` of a finished translation run.

    Args:
        run_dir: a finished run of a model with attention (`attention_weights`) on a
            translation split.
        part: the split's part to read (`validation` by default: the test set is not read
            for a diagnosis that could steer a design).
        batch_size: sentences at once (sources are swapped within a batch).

    Returns:
        A JSON-ready dict: `nats_per_token` (own source, another sentence's, the gap),
        `attention` (the share of the read steps' mass on each kind of position, and the
        mean entropy fraction), with the run's step counts.
    """
    import json
    from pathlib import Path

    from compgen_tf.analysis.translation_runs import attention_model_and_part

    config, model, split = attention_model_and_part(run_dir, part)
    limit = int(model.max_output_length)
    totals = {"own": 0.0, "other": 0.0, "tokens": 0}
    mass = {"sos": 0.0, "eos": 0.0, "last_word": 0.0, "other_words": 0.0, "steps": 0,
            "entropy_fraction": 0.0}
    for start in range(0, len(split), batch_size):
        batch = slice(start, start + batch_size)
        source_ids, target_ids = split.source_ids[batch], split.target_ids[batch]
        if len(source_ids) < 2:  # a last batch of one sentence has no other source
            continue
        for key, value in source_dependence(
                lambda s, t: np.asarray(model.compute_logits(s, t)), source_ids,
                target_ids).items():
            totals[key] += value
        output_ids, attention = (np.asarray(x) for x in
                                 model.attention_weights(source_ids, max_length=limit))
        steps = np.array([list(row).index(EOS_ID) + 1 if EOS_ID in row else limit
                          for row in output_ids])
        for key, value in attention_mass(attention, source_ids, steps).items():
            mass[key] += value
    metrics = Path(run_dir) / "metrics.json"
    recorded = json.loads(metrics.read_text()) if metrics.exists() else {}
    tokens, read = max(totals["tokens"], 1), max(mass["steps"], 1)
    return {"run": str(run_dir), "split": config["split"], "part": part,
            "seed": config.get("seed"), "best_step": recorded.get("best_step"),
            "steps": recorded.get("steps"),
            "nats_per_token": {"own_source": round(totals["own"] / tokens, 4),
                               "another_sentence_source": round(totals["other"] / tokens, 4),
                               "gap": round((totals["other"] - totals["own"]) / tokens, 4),
                               "tokens": totals["tokens"]},
            "attention": {**{kind: round(mass[kind] / read, 4) for kind in
                             ("sos", "eos", "last_word", "other_words")},
                          "entropy_fraction": round(mass["entropy_fraction"] / read, 4),
                          "steps_read": mass["steps"]}}
