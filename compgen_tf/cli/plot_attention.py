"""Attention heat map of one translation: `python -m compgen_tf plot-attention`.

    python -m compgen_tf plot-attention --run DIR --command "jump twice after walk left"

Writes a PNG (default `DIR/attention_<command>.png`): one row per output token,
one column per input position, as in the Syntactic Attention paper's Figures
10-15. Works for every model that implements `attention_weights`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from compgen_tf.cli.common import ArgumentParser, import_tensorflow_quietly
from compgen_tf.reporting.plot_attention import plot_attention


def main(argv=None) -> int:
    """`python -m compgen_tf plot-attention`: writes the heat map of `--command`'s
    translation; exit code 0, or 2 when the run, the model's attention or the command is
    refused."""
    parser = ArgumentParser(prog="python -m compgen_tf plot-attention",
                            description=__doc__)
    parser.add_argument("--run", required=True, help="run directory written by compgen_tf.train")
    parser.add_argument("--command", required=True, help="the SCAN command to translate")
    parser.add_argument("--out", help="PNG path (default: RUN/attention_<command>.png)")
    args = parser.parse_args(argv)
    import_tensorflow_quietly()
    from compgen_tf.experiments.experiment import load_run_model

    out = args.out or Path(args.run) / f"attention_{'_'.join(args.command.split())}.png"
    try:
        path = plot_attention(load_run_model(args.run), args.command, out)
    except (FileNotFoundError, TypeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0
