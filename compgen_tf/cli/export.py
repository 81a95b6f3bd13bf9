"""Export a trained run as a TF Serving SavedModel: strings in, strings out.

    python -m compgen_tf export --run DIR --out serving/models/NAME/1

The `serving_default` signature takes `commands` (string, shape [batch]) and
returns `actions` (string, [batch]) and `error` (string, [batch]; empty when the
command was translated). Tokenization and greedy decoding run inside the graph,
so the SavedModel needs nothing but TensorFlow. A meta seq2seq model (`MetaSeq2Seq`)
takes one episode per call instead: `support_commands`, `support_actions` and
`query_commands` (strings, [n]), and returns `actions` and `error` for the queries.
The toy-task models read symbol ids, not strings: their runs are refused (exit code 2).

`--xla-single-command` compiles the decoding of a single command with XLA, once per width:
every width up to 16 ids as it is, a wider command padded to 32, 64... up to the longest
input (batches keep the plain graph, which needs no compilation per batch size): see
`results/benchmarks/serving_xla_single_command_*.json`.
TF Serving runs such a model only with `--xla_cpu_compilation_enabled=true`, and compiles
each width on its first single-command request (about two seconds); see serving/README.md.
"""

from __future__ import annotations

import sys

from compgen_tf.cli.common import ArgumentParser, import_tensorflow_quietly


def main(argv=None) -> int:
    """`python -m compgen_tf export`: writes the run's SavedModel to `--out`; exit code 0,
    or 2 when the run is missing, `--out` exists or the model cannot be exported (a
    toy-task model)."""
    parser = ArgumentParser(prog="python -m compgen_tf export", description=__doc__)
    parser.add_argument("--run", required=True, help="run directory written by `train`")
    parser.add_argument("--out", required=True,
                        help="version directory to create, e.g. serving/models/scan/1")
    parser.add_argument("--xla-single-command", action="store_true",
                        help="decode one-command calls with XLA (TF Serving then needs "
                             "--xla_cpu_compilation_enabled=true)")
    args = parser.parse_args(argv)
    import_tensorflow_quietly()
    from compgen_tf.errors import CorruptRunFileError
    from compgen_tf.experiments.experiment import load_run_model
    from compgen_tf.models.export import export_model

    try:
        path = export_model(load_run_model(args.run), args.out,
                            xla_single_command=args.xla_single_command)
    except (FileNotFoundError, FileExistsError, TypeError, CorruptRunFileError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"exported {args.run} to {path}")
    return 0

