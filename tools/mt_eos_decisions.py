"""Where a translation run's `<eos>` wins or loses, and where its attention reads (issue 73).

    python tools/mt_eos_decisions.py --run RUN_DIR [--run ...] [--part test] \
        --out results/checks/mt_eos_decisions_NAME.json [--figure results/plots/NAME.png]

For each finished run (a model with attention on an English-French split), teacher-forced on
every reference of `--part`: the probability of `<eos>` where the reference ends and whether
it wins there, and how many references it would cut short; decoded freely: how many outputs
never stop, whether they loop, and which source position the attention reads past the
reference's length; and corpus BLEU free, cut to each reference's length and decoded to it
(`compgen_tf.analysis.eos_decisions`). Each summary is given for all sentences and by
outcome (exact, stopped but wrong, run-on). `--figure` draws the attention of
a few sentences of the first run (`--examples`, half exact, half run-on). A diagnosis of
finished runs: nothing is selected with it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def draw(examples, title: str, path: Path) -> Path:
    from compgen_tf.reporting.plotting import draw_heatmap, pyplot, save_figure

    plt = pyplot()
    figure, axes = plt.subplots(1, len(examples), figsize=(5.5 * len(examples), 7),
                                squeeze=False)
    for axis, example in zip(axes[0], examples):
        draw_heatmap(figure, axis, example["attention"], example["source"], example["output"],
                     "source", "output", f"{title}: test sentence {example['index']} "
                     f"({example['outcome']})", fontsize=7)
    figure.tight_layout()
    return save_figure(figure, path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", required=True, type=Path)
    parser.add_argument("--part", default="test", help="the split's part read (default test)")
    parser.add_argument("--examples", type=int, default=4,
                        help="sentences whose attention is kept (default 4)")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--figure", type=Path, help="a PNG of the first run's examples")
    args = parser.parse_args(argv)
    missing = [str(run) for run in args.run if not (run / "metrics.json").is_file()]
    if missing:
        parser.error(f"not a finished run directory (no metrics.json): {', '.join(missing)}")
    if args.examples < 0:
        parser.error("--examples must be 0 or more")

    from compgen_tf.analysis.eos_decisions import run_eos_decisions
    from compgen_tf.analysis.errors import AnalysisError

    try:
        runs = [run_eos_decisions(run, args.part, args.examples) for run in args.run]
    except AnalysisError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    command = "python tools/mt_eos_decisions.py " + " ".join(map(str, argv or sys.argv[1:]))
    report = {"what": "Teacher-forced <eos> decisions at the references' ends and free "
                      "outputs' loops and attention past them (tools/mt_eos_decisions.py)",
              "command": command,
              "provenance": {"kind": "check", "reason": "read off finished runs' kept models "
                                                        "on their test split; nothing chosen"},
              "per_run": runs}
    if args.figure and runs[0]["examples"]:
        report["figure"] = str(draw(runs[0]["examples"], Path(runs[0]["run"]).name,
                                    args.figure))
    text = json.dumps(report, indent=1) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    for run in runs:
        print(run["run"], json.dumps(run["bleu"]))
        print(f"  all: {json.dumps(run['summary'])}")
        for outcome, summary in run["by_outcome"].items():
            print(f"  {outcome}: {json.dumps(summary)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
