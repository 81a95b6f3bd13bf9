"""How much of a length failure is the decision to stop? Decoding with the true length given.

    python tools/length_oracle_decoding.py --run RUN [--split test] [--lengths FILE]
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

`--lengths FILE` ({command: length}, as `tools/length_automaton.py --predictions` writes
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
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from compgen_tf.analysis.length_oracle import decode_three_ways, oracle_report  # noqa: E402
from compgen_tf.experiments.experiment import load_run_model, run_config  # noqa: E402
from compgen_tf.experiments.scan import split_examples  # noqa: E402


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
    report = oracle_report(args.run, config, args.split, examples, free, forced, predicted,
                           predicted_lengths, args.lengths)
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
