"""Whether a translation run reads its source, and where its attention sits (issue 73).

    python tools/mt_source_dependence.py --run RUN_DIR [--run ...] [--part validation] \
        --out results/checks/mt_source_dependence_NAME.json

For each finished run (a model with attention on an English-French split), over `--part`
(validation by default): the teacher-forced cross-entropy per reference token given each
sentence's own source and given another sentence's (the batch's rows rolled by one), and
the share of the freely decoded steps' attention on the source's `<sos>`, its `<eos>`, its
last word and its other words, with the attention's mean entropy as a fraction of the
uniform one's (`compgen_tf.analysis.source_dependence`). A diagnosis of finished runs:
nothing is selected with it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", action="append", required=True, type=Path)
    parser.add_argument("--part", default="validation",
                        help="the split's part read (default validation)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    missing = [str(run) for run in args.run if not (run / "metrics.json").is_file()]
    if missing:
        parser.error(f"not a finished run directory (no metrics.json): {', '.join(missing)}")

    from compgen_tf.analysis.errors import AnalysisError
    from compgen_tf.analysis.source_dependence import run_source_dependence

    try:
        runs = [run_source_dependence(run, args.part) for run in args.run]
    except AnalysisError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    command = "python tools/mt_source_dependence.py " + " ".join(map(str, argv or sys.argv[1:]))
    report = {"what": "Teacher-forced nats per reference token with each sentence's own source "
                      "and with another sentence's, and where the free decoding's attention "
                      "sits (tools/mt_source_dependence.py)",
              "command": command,
              "provenance": {"kind": "check", "reason": f"read off finished runs' kept models "
                                                        f"on their {args.part} split; nothing "
                                                        f"chosen"},
              "per_run": runs}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    for run in runs:
        print(run["run"], json.dumps(run["nats_per_token"]), json.dumps(run["attention"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
