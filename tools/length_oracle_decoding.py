"""How much of a length failure is the decision to stop? Decoding with the true length given.

    python scripts/length_oracle_decoding.py --run RUN [--split test] [--lengths FILE]
        [--out FILE]

A diagnostic for the length splits (issue 36), in the spirit of Newman et al. (2020), "The
EOS decision and length extrapolation": a trained run's model decodes each command of
`--split` twice, greedily both times:
- free: as in evaluation, until it emits `<eos>`;
- with the true length: `<eos>` is masked until the expected number of actions has been
  emitted, and then forced.
If the second is much better, the model knows what to say but not when to stop. Free
decoding's exact match here equals the run's own evaluation. The oracle is a diagnostic
only: no model of the library is given the length.

`--lengths FILE` ({command: length}, as `scripts/length_automaton.py --predictions` writes
them) adds a third decoding with those lengths in place of the true ones: a length learned
from the training commands, which is no oracle.

Also counts, per expected length, the lengths of the free predictions (how far beyond its
training lengths the model goes). Prints a summary and writes the JSON to `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from keras import ops  # noqa: E402

from compgen_tf.experiments.experiment import load_run_model, run_config  # noqa: E402
from compgen_tf.experiments.scan import split_examples  # noqa: E402


def decode_with_length(model, source_ids, lengths, max_length):
    """Greedy ids (batch, max_length) with `<eos>` ruled out before each row's length and
    forced at it: the decoder's own greedy loop with `GreedySampler(lengths=...)`."""
    memory = model.backbone.encode(ops.convert_to_tensor(source_ids, "int32"))
    ids, _ = model.backbone.decoder.greedy(memory, max_length, return_attention=False,
                                           lengths=ops.convert_to_tensor(lengths, "int32"))
    return ids


def decode_three_ways(model, commands, lengths, predicted_lengths, max_length, batch_size):
    """(free, with `lengths`, with `predicted_lengths`) translations of `commands`; the
    third list is empty when `predicted_lengths` is None."""
    free, forced, predicted = [], [], []
    for start in range(0, len(commands), batch_size):
        batch = slice(start, start + batch_size)
        source_ids, _ = model.encode_commands(commands[batch])
        free += model.translate(commands[batch])
        for given, out in ((lengths, forced), (predicted_lengths, predicted)):
            if given is not None:
                out += _strings(model.decode_actions(decode_with_length(
                    model, source_ids, given[batch], max_length))[0])
    return free, forced, predicted


def _strings(actions) -> list[str]:
    return [a.decode() for a in actions.numpy()]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="a finished run of a SCAN model")
    parser.add_argument("--split", default="test", help="fit, validation or test (default)")
    parser.add_argument("--lengths", help="JSON {command: length}: also decode with these")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--out", help="also write the JSON to this file")
    args = parser.parse_args(argv)
    try:
        config = run_config(args.run)
        model = load_run_model(args.run)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    examples = split_examples(config["split"], args.split, config["data"], config["seed"])
    commands = [c for c, _ in examples]
    expected = [a for _, a in examples]
    lengths = [len(a.split()) for a in expected]
    predicted_lengths = None
    if args.lengths:
        try:
            given = json.loads(Path(args.lengths).read_text())
            predicted_lengths = [int(given[c]) for c in commands]
        except (OSError, ValueError, KeyError) as error:
            print(f"error: --lengths {args.lengths}: {error!r} (expected a JSON object with "
                  f"a length for every command of the split)", file=sys.stderr)
            return 2
    max_length = model.max_output_length
    longest = max(lengths + (predicted_lengths or []))
    if longest >= max_length:
        print(f"error: an output would have {longest} actions; the model decodes at "
              f"most {max_length - 1} before <eos>", file=sys.stderr)
        return 2
    free, forced, predicted = decode_three_ways(model, commands, lengths, predicted_lengths,
                                                max_length, args.batch_size)
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
        "run": str(args.run), "model": config["model"], "split": config["split"],
        "part": args.split, "commands": len(commands),
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
        report["lengths_file"] = str(args.lengths)
        report["predicted_length_wrong"] = int(sum(
            p != n for p, n in zip(predicted_lengths, lengths)))
        report["exact_match_predicted_length"] = float(predicted_right.mean())
    print(f"{config['model']} on {config['split']} {args.split} ({len(commands)} commands): "
          f"free {report['exact_match_free']:.4f}, with the true length "
          f"{report['exact_match_true_length']:.4f}"
          + (f", with the given lengths {report['exact_match_predicted_length']:.4f} "
             f"({report['predicted_length_wrong']} lengths differ from the true ones)"
             if predicted_lengths is not None else ""))
    for n, row in report["by_expected_length"].items():
        print(f"  {n:>2} actions: {row['n']:>4} commands, free {row['free']}, true length "
              f"{row['true_length']}; free lengths {row['free_lengths']}")
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
