"""What the composition baselines get wrong: the wrong action, or the right action a wrong
number of times.

    python tools/composition_error_kinds.py --runs-dir RUNS [--seeds 5]
        [--out results/checks/composition_error_kinds.json]

Reads the finished composition runs of `symbol_convolution`, `mlp_baseline`,
`recurrent_baseline` (toy runs: `RUNS/<model>/composition/seed<N>`) and `seq2seq`
(`RUNS/seq2seq/composition/seed<N>`, trained with `--split composition`), decodes each
seed's test pairs with the run's best model, and classifies every wrong one:

- `count`: only the held-out command's action, repeated too few or too many times;
- `action`: as many actions as expected, not all of them the command's;
- `both`: neither.

Seed N of every model has the same pairs (the draw of seed N), so a row compares the models
on the same three held-out combinations. Prints the per-seed table and writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from compgen_tf.analysis.composition_errors import MODELS, seed_report  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs-dir", required=True, help="the runs directory of the runs")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (default 5)")
    parser.add_argument("--out", help="also write the JSON to this file")
    args = parser.parse_args(argv)
    runs = Path(args.runs_dir)
    missing = [str(runs / model / "composition" / f"seed{seed}") for model in MODELS
               for seed in range(args.seeds)
               for needed in (("metrics.json", "errors_test.jsonl") if model == "seq2seq"
                              else ("metrics.json", "best_model.keras"))
               if not (runs / model / "composition" / f"seed{seed}" / needed).exists()]
    if missing:
        print(f"error: not a finished run: {missing[0]} (and {len(missing) - 1} more)",
              file=sys.stderr)
        return 2

    from compgen_tf.experiments.toy import composition_pairs

    report = {"runs_dir": str(runs), "seeds": {}}
    for seed in range(args.seeds):
        runs_of_seed = {model: runs / model / "composition" / f"seed{seed}" for model in MODELS}
        data = json.loads((runs_of_seed["seq2seq"] / "config.json").read_text())["data"]
        pairs = composition_pairs(seed, data)["test"]
        report["seeds"][str(seed)] = {
            "held_out": sorted(set(command for command, _ in pairs)),
            **{model: seed_report(model, run_dir, pairs)
               for model, run_dir in runs_of_seed.items()}}
        row = report["seeds"][str(seed)]
        print(f"seed {seed} ({', '.join(row['held_out'])}): " + "; ".join(
            f"{model} {row[model]['right']}/{row[model]['test_pairs']}"
            + "".join(f" [{e['command']} -> {len(e['predicted'].split())} actions, {e['kind']}]"
                      for e in row[model]["errors"]) for model in MODELS))
    text = json.dumps(report, indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
