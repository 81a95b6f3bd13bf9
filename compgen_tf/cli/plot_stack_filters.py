"""The `plot-stack-filters` command; its manual is `compgen_tf.reporting.plot_stack_filters`'s docstring."""

from __future__ import annotations

import sys
from pathlib import Path

from compgen_tf.cli.common import ArgumentParser
from compgen_tf.reporting import plot_stack_filters as reporting_plot_stack_filters
from compgen_tf.reporting.plot_stack_filters import (load_stack_model, plot_stack_filters,
                                                     push_profile)


def main(argv=None) -> int:
    """`python -m compgen_tf plot-stack-filters`: writes the filters' heat maps of
    `--string` and prints each unit's push profile; exit code 0, or 2 when the run or the
    string is refused."""
    parser = ArgumentParser(prog="python -m compgen_tf plot-stack-filters",
                            description=reporting_plot_stack_filters.__doc__)
    parser.add_argument("--run", required=True,
                        help="a stack_lstm run directory (holds best_model.keras)")
    parser.add_argument("--string", required=True, help="symbols separated by spaces")
    parser.add_argument("--out", help="PNG path (default: RUN/stack_filters_<string>.png)")
    args = parser.parse_args(argv)
    try:
        model = load_stack_model(args.run)
    except (FileNotFoundError, TypeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    out = args.out or Path(args.run) / f"stack_filters_{'_'.join(args.string.split())}.png"
    try:
        path = plot_stack_filters(model, args.string, out)
        profile = push_profile(model, [args.string])
    except (TypeError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("mean push weight per unit before the central o:")
    for symbol, weights in profile.items():
        print(f"  {symbol}: " + " ".join(f"{w:.2f}" for w in weights))
    print(f"wrote {path}")
    return 0
