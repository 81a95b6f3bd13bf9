"""The `plot-meta-attention` command; its manual is `compgen_tf.reporting.plot_meta_attention`'s docstring."""

from __future__ import annotations

import sys
from pathlib import Path

from compgen_tf.cli.common import ArgumentParser, import_tensorflow_quietly
from compgen_tf.reporting import plot_meta_attention as reporting_plot_meta_attention
from compgen_tf.reporting.plot_meta_attention import default_support, plot_episode_attention


def main(argv=None) -> int:
    """`python -m compgen_tf plot-meta-attention`: writes the two heat maps of `--query`
    (with the `--support` pairs, or the task's first test episode); exit code 0, or 2
    when the run or the episode is refused."""
    parser = ArgumentParser(prog="python -m compgen_tf plot-meta-attention",
                            description=reporting_plot_meta_attention.__doc__)
    parser.add_argument("--run", required=True, help="a meta_seq2seq run directory")
    parser.add_argument("--query", required=True, help="the query command")
    parser.add_argument("--support", action="append", default=[], metavar="COMMAND=ACTIONS",
                        help="a support pair (repeatable); default: the first test episode")
    parser.add_argument("--out", help="PNG path (default: RUN/meta_attention_<query>.png)")
    args = parser.parse_args(argv)
    import_tensorflow_quietly()
    from compgen_tf.experiments.experiment import load_run_model

    if args.support:
        pairs = [item.split("=", 1) for item in args.support]
        if any(len(p) != 2 for p in pairs):
            parser.error("--support items look like COMMAND=ACTIONS")
        support_commands, support_actions = zip(*pairs)
    else:
        support_commands, support_actions = default_support(args.run)
    out = args.out or Path(args.run) / f"meta_attention_{'_'.join(args.query.split())}.png"
    try:
        path = plot_episode_attention(load_run_model(args.run), support_commands,
                                      support_actions, args.query, out)
    except (FileNotFoundError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0
