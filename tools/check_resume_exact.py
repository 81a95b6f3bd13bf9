"""Does a run in the paper's regime repeat, and resume, exactly on one machine?

    python tools/check_resume_exact.py [--config FILE] [--steps N] [--out FILE]

Trains a small Syntactic Attention model with the `training` settings of `--config`
(default: `configs/syntactic_attention/paper_regime.json`: batch 1, no clipping,
XLA-compiled, unrolled steps) and its dropout, on the SCAN commands of at most three words,
three times in fresh run directories of a temporary folder:
- straight through `--steps` updates;
- the same again (does the run repeat?);
- killed half a checkpoint interval after its third checkpoint (a run checkpoints every
  `--steps // 6` updates), then run again with the same call, which resumes from that
  checkpoint (does the resumed run equal the straight one?).
Prints one JSON line: the largest absolute difference between the final weights of each pair
and the logged training losses. The sizes are small so that it runs in minutes; the path
(`compgen_tf.training.fit.fit_split`, the train step, the checkpoints) is the one every run
takes. It checks one machine: two machines may pick other kernels
(docs/reproducibility.md).
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# Checked here, before the package (and TensorFlow) is imported: a bad --steps is one line.
MIN_STEPS = 12


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/syntactic_attention/paper_regime.json")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.steps < MIN_STEPS:
        print(f"error: --steps must be at least {MIN_STEPS} (got {args.steps}): the run is "
              "stopped between two checkpoints", file=sys.stderr)
        return 2

    from compgen_tf.analysis.output import emit
    from compgen_tf.analysis.resume_check import resume_exactness

    emit(resume_exactness(args.config, args.steps), args.out, "check_resume_exact.py", argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
