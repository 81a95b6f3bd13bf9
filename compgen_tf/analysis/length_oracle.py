"""How much of a length failure is the decision to stop? Greedy decoding with the length given.

In the spirit of Newman et al. (2020), "The EOS decision and length extrapolation": a
trained run's model decodes each command greedily, freely (until it emits `<eos>`) and with
a given length (`<eos>` masked until that many actions have been emitted, then forced). With
the true lengths this is an oracle, a diagnostic only; with lengths learned from the training
commands (`tools/length_automaton.py --predictions`) it is not
(`tools/length_oracle_decoding.py`, docs/length_generalization.md section 3).
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from keras import ops


def decode_with_length(model, source_ids, lengths, max_length):
    """Greedy ids with `<eos>` ruled out before each row's length and forced at it.

    Args:
        model: a SCAN model with a recurrent decoder (`model.backbone.decoder.greedy`).
        source_ids: encoded commands, (batch, source length) int.
        lengths: each row's number of actions.
        max_length: the decoding budget, `<eos>` included.

    Returns:
        The ids, (batch, max_length): the decoder's own greedy loop with
        `GreedySampler(lengths=...)`.
    """
    memory = model.backbone.encode(ops.convert_to_tensor(source_ids, "int32"))
    ids, _ = model.backbone.decoder.greedy(memory, max_length, return_attention=False,
                                           lengths=ops.convert_to_tensor(lengths, "int32"))
    return ids


def decoded_strings(actions) -> list[str]:
    """Python strings of a string tensor of decoded actions.

    Args:
        actions: a string tensor (bytes), as `model.decode_actions(...)[0]`.

    Returns:
        The decoded strings, in order.
    """
    return [a.decode() for a in actions.numpy()]


def decode_three_ways(model, commands, lengths, predicted_lengths, max_length, batch_size):
    """Free, true-length and given-length translations of `commands`.

    Args:
        model: a SCAN model with a recurrent decoder.
        commands: the commands.
        lengths: each command's true number of actions.
        predicted_lengths: other lengths to decode with, or None.
        max_length: the decoding budget, `<eos>` included.
        batch_size: commands decoded at once.

    Returns:
        (free, with `lengths`, with `predicted_lengths`) lists of translations; the third is
        empty when `predicted_lengths` is None.
    """
    free, forced, predicted = [], [], []
    for start in range(0, len(commands), batch_size):
        batch = slice(start, start + batch_size)
        source_ids, _ = model.encode_commands(commands[batch])
        free += model.translate(commands[batch])
        for given, out in ((lengths, forced), (predicted_lengths, predicted)):
            if given is not None:
                out += decoded_strings(model.decode_actions(decode_with_length(
                    model, source_ids, given[batch], max_length))[0])
    return free, forced, predicted


def oracle_report(run, config, part, examples, free, forced, predicted=None,
                  predicted_lengths=None, lengths_file=None) -> dict:
    """The report of one run's three decodings.

    Args:
        run: the run directory (recorded as given).
        config: the run's `config.json`.
        part: the part of the split decoded (fit, validation or test).
        examples: its (command, actions) pairs.
        free: the free translations, in the order of `examples`.
        forced: the translations decoded to the true lengths.
        predicted: the translations decoded to `predicted_lengths`, or None.
        predicted_lengths: the given lengths, or None.
        lengths_file: where they came from (recorded).

    Returns:
        Exact match free and with the true length, the commands right only one way, per
        expected length the counts and the lengths of the free predictions, up to ten
        examples right only with the true length and, with `predicted_lengths`, exact match
        with those lengths and how many of them differ from the true ones.
    """
    commands = [c for c, _ in examples]
    expected = [a for _, a in examples]
    lengths = [len(a.split()) for a in expected]
    free_right = np.array([p == a for p, a in zip(free, expected)])
    forced_right = np.array([p == a for p, a in zip(forced, expected)])
    by_length = defaultdict(lambda: {"n": 0, "free": 0, "true_length": 0,
                                     "free_lengths": Counter()})
    for n, p, ok_free, ok_forced in zip(lengths, free, free_right, forced_right):
        row = by_length[n]
        row["n"] += 1
        row["free"] += int(ok_free)
        row["true_length"] += int(ok_forced)
        row["free_lengths"][len(p.split())] += 1
    report = {
        "run": str(run), "model": config["model"], "split": config["split"],
        "part": part, "commands": len(commands),
        "exact_match_free": float(free_right.mean()),
        "exact_match_true_length": float(forced_right.mean()),
        "right_only_with_true_length": int((forced_right & ~free_right).sum()),
        "right_only_free": int((free_right & ~forced_right).sum()),
        "by_expected_length": {
            str(n): {"n": row["n"], "free": row["free"], "true_length": row["true_length"],
                     "free_lengths": {str(k): v for k, v in sorted(row["free_lengths"].items())}}
            for n, row in sorted(by_length.items())},
        "examples_right_only_with_true_length": [
            {"command": c, "expected": a, "free": p}
            for c, a, p, ok_free, ok_forced in zip(commands, expected, free, free_right,
                                                    forced_right)
            if ok_forced and not ok_free][:10],
    }
    if predicted_lengths is not None:
        predicted_right = np.array([p == a for p, a in zip(predicted, expected)])
        report["lengths_file"] = str(lengths_file)
        report["predicted_length_wrong"] = int(sum(
            p != n for p, n in zip(predicted_lengths, lengths)))
        report["exact_match_predicted_length"] = float(predicted_right.mean())
    return report
