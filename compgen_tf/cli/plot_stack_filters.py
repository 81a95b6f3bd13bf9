"""What each stack of a trained StackLSTM does: `python -m compgen_tf plot-stack-filters`.

    python -m compgen_tf plot-stack-filters --run runs/stack_lstm/palindromes_depth/seed0 \\
        --string "b a c a d a o a d a c a b"

Writes a PNG (default `RUN/stack_filters_<string>.png`) with three heat maps, the
push, keep and pop weights of every unit's softmax filter (eq. 7 of "Symmetry and
systematicity", Appendix C) at every input symbol. It prints each unit's push
profile too: its mean push weight while reading each symbol before the central `o`.

A unit that pushes for every symbol before the `o` and pops after it is one stack
of a pushdown automaton. A unit that pushes for some symbols only keeps a stack per
symbol class. Such stacks are trained only as deep as the training strings nest
that class, which is where the depth test of Table 3 breaks.
"""

from __future__ import annotations

import sys
from pathlib import Path

from compgen_tf.cli.common import ArgumentParser, import_tensorflow_quietly


def main(argv=None) -> int:
    """`python -m compgen_tf plot-stack-filters`: writes the filters' heat maps of
    `--string` and prints each unit's push profile; exit code 0, or 2 when the run or the
    string is refused."""
    parser = ArgumentParser(prog="python -m compgen_tf plot-stack-filters",
                            description=__doc__)
    parser.add_argument("--run", required=True,
                        help="a stack_lstm run directory (holds best_model.keras)")
    parser.add_argument("--string", required=True, help="symbols separated by spaces")
    parser.add_argument("--out", help="PNG path (default: RUN/stack_filters_<string>.png)")
    args = parser.parse_args(argv)
    import_tensorflow_quietly()
    from compgen_tf.reporting.plot_stack_filters import (load_stack_model, plot_stack_filters,
                                                         push_profile)

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
