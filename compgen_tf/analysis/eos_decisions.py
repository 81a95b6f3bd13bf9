"""Where a translation model's `<eos>` wins or loses, and where it attends (issue 73).

A run of Syntactic Attention on English-French can learn to translate and still emit outputs
that never stop (seed 0 of the paper's regime: a fifth of its wrong test translations run to
the output limit, `tools/mt_output_lengths.py`). Two questions separate the ways that can
happen, and this module answers both for a finished run's kept model on one split:

- **Does the model know where the reference ends?** Teacher-forced on each reference, the
  probability of `<eos>` at the reference's end and whether it is the most likely token
  there (`eos_at_reference_end`), and how often `<eos>` would win before the end.
- **What does free decoding do once it is past the reference's length?** Whether a run-on
  output repeats itself (`repeating_tail`: a loop of a few tokens), and which source
  position the attention reads at those steps: the sentence's last word, its `<eos>`
  boundary, or another word (`attention_past_reference`).

And how much of the run's BLEU the `<eos>` decision costs: free corpus BLEU beside the same
outputs cut to each reference's length, and the model decoded to each reference's length
(`<eos>` ruled out before it and forced at it, `length_oracle.decode_with_length`; an oracle,
a diagnosis only). `run_eos_decisions` keeps the full attention of a few sentences for a
figure. Nothing is selected with any of it: it reads a finished run's outputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from compgen_tf.tokens import EOS_ID, SOS_ID


def reference_lengths(target_ids) -> np.ndarray:
    """The number of tokens before `<eos>` in each row of `target_ids` (batch, T).

    Args:
        target_ids: int array (batch, T), each row a reference ending with `<eos>` and
            padded with `<pad>`.

    Returns:
        int array (batch,).

    Example:
        >>> reference_lengths(np.array([[5, 6, 2, 0], [7, 2, 0, 0]]))
        array([2, 1])
    """
    target_ids = np.asarray(target_ids)
    is_eos = target_ids == EOS_ID
    if not is_eos.any(axis=1).all():
        raise ValueError("every reference row must end with <eos>")
    return is_eos.argmax(axis=1)


def eos_at_reference_end(probabilities, target_ids) -> dict:
    """How `<eos>` fares, teacher-forced, at and before each reference's end.

    Args:
        probabilities: float array (batch, T, vocabulary), the model's next-token
            distribution at each step, fed the reference's tokens.
        target_ids: int array (batch, T), the references (`<eos>`, then `<pad>`).

    Returns:
        A dict of per-row arrays: `p_eos_at_end` (the probability of `<eos>` where the
        reference ends), `eos_rank_at_end` (how many tokens are more likely there; 0 when
        `<eos>` wins), `premature_eos_steps` (steps before the end where `<eos>` is the most
        likely token) and `top_token_at_end` (the most likely token there).

    Example:
        >>> p = np.zeros((1, 3, 5)); p[0, 0, 4] = p[0, 1, 2] = p[0, 2, 3] = 1.0
        >>> out = eos_at_reference_end(p, np.array([[4, 2, 0]]))
        >>> int(out["eos_rank_at_end"][0]), int(out["premature_eos_steps"][0])
        (0, 0)
    """
    probabilities = np.asarray(probabilities)
    lengths = reference_lengths(target_ids)
    rows = np.arange(len(lengths))
    at_end = probabilities[rows, lengths]  # (batch, vocabulary)
    p_eos = at_end[:, EOS_ID]
    top = probabilities.argmax(axis=-1)  # (batch, T)
    before_end = np.arange(probabilities.shape[1])[None, :] < lengths[:, None]
    return {"p_eos_at_end": p_eos,
            "eos_rank_at_end": (at_end > p_eos[:, None]).sum(axis=1),
            "premature_eos_steps": ((top == EOS_ID) & before_end).sum(axis=1),
            "top_token_at_end": top[rows, lengths]}


def repeating_tail(tokens, max_period: int = 8, min_repeats: int = 3) -> int:
    """The shortest period (in tokens) with which the end of `tokens` repeats itself at least
    `min_repeats` times in a row, or 0 when it does not.

    Args:
        tokens: a sequence of tokens (ids or words).
        max_period: the longest period looked for.
        min_repeats: how many whole repetitions make a loop.

    Returns:
        The period, an int (0: no loop).

    Example:
        >>> repeating_tail("le chat est la la la la".split())
        1
        >>> repeating_tail("a b c a b a b a b".split())
        2
        >>> repeating_tail("a b c d".split())
        0
    """
    tokens = list(tokens)
    for period in range(1, max_period + 1):
        span = period * min_repeats
        if span > len(tokens):
            break
        tail = tokens[-span:]
        if all(tail[i] == tail[i + period] for i in range(span - period)):
            return period
    return 0


def attention_past_reference(attention, source_ids, output_length, reference_length):
    """Where the attention reads at the free output's steps past the reference's length.

    Args:
        attention: float array (steps, S) of one row: each output step's weights over the
            source positions.
        source_ids: int array (S,), that row's source (`<sos>` first where the model's
            preprocessor puts one, then the words, `<eos>`, padding).
        output_length: the number of tokens the row emitted before `<eos>` (or the output
            limit when it emitted none).
        reference_length: the reference's number of tokens.

    Returns:
        A dict of counts over those steps by the source position with the most weight:
        `last_word` (the sentence's last word, its closing punctuation in this set),
        `source_eos`, `source_sos`, `other_word`; and `steps`, their total.

    Example:
        >>> a = np.zeros((4, 4)); a[:, 2] = 1.0  # <sos> w1 w2 <eos>: always on w2
        >>> attention_past_reference(a, np.array([SOS_ID, 7, 8, EOS_ID]), 4, 1)["last_word"]
        3
    """
    source_ids = np.asarray(source_ids)
    eos_position = int(np.flatnonzero(source_ids == EOS_ID)[0])
    argmax = np.asarray(attention)[reference_length:output_length].argmax(axis=-1)
    counts = {"last_word": int((argmax == eos_position - 1).sum()),
              "source_eos": int((argmax == eos_position).sum()),
              "source_sos": int(((argmax == 0) & (source_ids[0] == SOS_ID)).sum())}
    counts["other_word"] = int(len(argmax) - sum(counts.values()))
    counts["steps"] = int(len(argmax))
    return counts


def run_eos_decisions(run_dir, part: str = "test", examples_shown: int = 4,
                      batch_size: int = 64) -> dict:
    """`eos_at_reference_end`, `repeating_tail` and `attention_past_reference` for every
    sentence of `part` of a finished translation run, summarized, with the attention of a
    few sentences (`examples_shown`: half exactly right, half run-on, the first of each in
    the split's order).

    Args:
        run_dir: a finished run of a model with attention (`attention_weights`) on an
            English-French split.
        part: the split's part to read (`test`, `validation`, `daxy`, ...).
        examples_shown: how many sentences' attention to keep.
        batch_size: sentences decoded at once.

    Returns:
        A JSON-ready dict: `bleu` (free, free cut to the reference's length, decoded to
        the reference's length), `summary`, `by_outcome` (exact, stopped, run-on) and
        `examples`.
    """
    from compgen_tf.analysis.length_oracle import decode_with_length
    from compgen_tf.analysis.translation_runs import attention_model_and_part
    from compgen_tf.training.bleu import corpus_bleu

    config, model, split = attention_model_and_part(run_dir, part)
    limit = int(model.max_output_length)
    target_vocabulary = model.preprocessor.target_vocabulary
    source_vocabulary = model.preprocessor.source_vocabulary
    rows = []
    for start in range(0, len(split), batch_size):
        batch = slice(start, start + batch_size)
        source_ids, target_ids = split.source_ids[batch], split.target_ids[batch]
        logits = np.asarray(model.compute_logits(source_ids, target_ids), "float64")
        probabilities = np.exp(logits - logits.max(axis=-1, keepdims=True))
        probabilities /= probabilities.sum(axis=-1, keepdims=True)
        teacher_forced = eos_at_reference_end(probabilities, target_ids)
        output_ids, attention = (np.asarray(x) for x in
                                 model.attention_weights(source_ids, max_length=limit))
        references = reference_lengths(target_ids)
        oracle_ids = np.asarray(decode_with_length(model, source_ids,
                                                   np.minimum(references, limit - 1), limit))
        for i in range(len(source_ids)):
            emitted = list(output_ids[i])
            stopped = EOS_ID in emitted
            length = emitted.index(EOS_ID) if stopped else limit
            tokens = [target_vocabulary[t] for t in emitted[:length]]
            reference = [target_vocabulary[t] for t in target_ids[i][:references[i]]]
            shown = int(np.flatnonzero(source_ids[i] == EOS_ID)[0]) + 1  # through <eos>
            rows.append({
                "index": start + i, "stopped": stopped, "exact": tokens == reference,
                "output_length": length, "reference_length": int(references[i]),
                "p_eos_at_end": float(teacher_forced["p_eos_at_end"][i]),
                "eos_rank_at_end": int(teacher_forced["eos_rank_at_end"][i]),
                "premature_eos_steps": int(teacher_forced["premature_eos_steps"][i]),
                "top_token_at_end": target_vocabulary[teacher_forced["top_token_at_end"][i]],
                "loop_period": 0 if stopped else repeating_tail(tokens),
                "past_reference": attention_past_reference(attention[i], source_ids[i],
                                                           length, int(references[i])),
                "_attention": attention[i][:length + int(stopped), :shown],
                "_source": [source_vocabulary[t] for t in source_ids[i][:shown]],
                "_output": tokens + (["<eos>"] if stopped else []),
                "_oracle": [target_vocabulary[t] for t in
                            oracle_ids[i][:list(oracle_ids[i]).index(EOS_ID)]]})
    references_text = [[actions] for actions in split.actions]
    free = [r["_output"][:r["output_length"]] for r in rows]
    metrics = Path(run_dir) / "metrics.json"
    recorded = (json.loads(metrics.read_text()).get("bleu", {}).get(part, {}).get("bleu")
                if metrics.exists() else None)
    return {"run": str(run_dir), "split": config["split"], "part": part,
            "sentences": len(rows), "output_limit": limit,
            "bleu": {"free": round(corpus_bleu([" ".join(t) for t in free],
                                               references_text), 2),
                     "free_cut_to_reference_length": round(corpus_bleu(
                         [" ".join(t[:r["reference_length"]]) for t, r in zip(free, rows)],
                         references_text), 2),
                     "decoded_to_reference_length": round(corpus_bleu(
                         [" ".join(r["_oracle"]) for r in rows], references_text), 2),
                     # The run's own free BLEU on this part, for a check of the first.
                     "free_in_run_metrics": recorded},
            "summary": _summary(rows), "by_outcome": {
                outcome: _summary([r for r in rows if _outcome(r) == outcome])
                for outcome in ("exact", "stopped_wrong", "run_on")},
            "examples": _examples(rows, examples_shown)}


def _outcome(row) -> str:
    return "exact" if row["exact"] else "stopped_wrong" if row["stopped"] else "run_on"


def _summary(rows) -> dict:
    if not rows:
        return {"sentences": 0}
    p_eos = np.array([r["p_eos_at_end"] for r in rows])
    past = {key: sum(r["past_reference"][key] for r in rows)
            for key in ("last_word", "source_eos", "source_sos", "other_word", "steps")}
    run_on = [r for r in rows if not r["stopped"]]
    return {"sentences": len(rows),
            "eos_wins_at_reference_end": sum(r["eos_rank_at_end"] == 0 for r in rows),
            "p_eos_at_reference_end_median": round(float(np.median(p_eos)), 4),
            "p_eos_at_reference_end_mean": round(float(p_eos.mean()), 4),
            "top_tokens_at_reference_end_when_eos_loses": _most_common(
                r["top_token_at_end"] for r in rows if r["eos_rank_at_end"] > 0),
            "with_premature_eos_win": sum(r["premature_eos_steps"] > 0 for r in rows),
            "run_on": len(run_on),
            "run_on_with_looping_tail": sum(r["loop_period"] > 0 for r in run_on),
            "loop_periods": _most_common(r["loop_period"] for r in run_on if r["loop_period"]),
            "attention_past_reference_length": past}


def _most_common(values, top: int = 8) -> dict:
    counts = {}
    for value in values:
        counts[str(value)] = counts.get(str(value), 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top])


def _examples(rows, count: int) -> list[dict]:
    """The first `count // 2` exact sentences and the first run-on ones (the rest of
    `count`), in the split's order."""
    exact = [r for r in rows if r["exact"]][:count // 2]
    run_on = [r for r in rows if _outcome(r) == "run_on"][:count - len(exact)]
    return [{"index": r["index"], "outcome": _outcome(r), "source": r["_source"],
             "output": r["_output"], "reference_length": r["reference_length"],
             "decoded_to_reference_length": r["_oracle"],
             "attention": np.round(r["_attention"], 3).tolist()} for r in exact + run_on]
