"""One command line for the library: `python -m compgen_tf <command> [options]`.

    python -m compgen_tf train --model syntactic_attention      # = python -m compgen_tf.train
    python -m compgen_tf evaluate --run runs/seq2seq/simple/seed0
    python -m compgen_tf --help                                  # every command, one line each
    python -m compgen_tf <command> --help                        # that command's options

Installed as the console script `compgen-tf`. Each command is the `main(argv)` of one module;
`python -m compgen_tf.train` (`make train`) is the one module that also runs on its own.
Every command works for every registered model (`compgen_tf.registry.MODELS`).

Commands recorded in results files before 0.2.0 name a module: run
`python -m compgen_tf.<module> ARGS` as `python -m compgen_tf <command> ARGS`, with
`toy_runs` -> `reproduce` and `meta_training` -> `reproduce --model meta_seq2seq`
(`--variant V` of `toy_runs` is now `--name TASK_V`); the 0.1.0 commands `reproduce-toy`
and `reproduce-meta` are `reproduce` too.
TensorFlow's log lines are hidden unless `--verbose` is given, anywhere on the line
(`compgen_tf.cli.common.quiet_tensorflow_logs`: the command line's business, not the
library's, whose import leaves the host's streams alone). `--help` and a refused argument
are answered before TensorFlow is imported (the names offered come from `compgen_tf.names`);
an argument error is one line, `PROG: error: MESSAGE`, and exit code 2
(`compgen_tf.cli.common.ArgumentParser`). `--backend jax` of `train`, `tune` and
`reproduce` sets `KERAS_BACKEND` before Keras is imported (`compgen_tf.cli.common.select_backend`).
"""

from __future__ import annotations

import importlib
import sys

from compgen_tf.cli.common import (import_tensorflow_quietly, quiet_tensorflow_logs,
                                   select_backend, tensorflow_import_hidden)

__all__ = ["COMMANDS", "import_tensorflow_quietly", "main", "quiet_tensorflow_logs", "usage"]

# command -> (module whose main(argv) runs it, what it does)
COMMANDS = {
    "train": ("compgen_tf.cli.train", "train one model on a SCAN split or a task (resumable)"),
    "evaluate": ("compgen_tf.cli.evaluate", "exact match of a trained run on its splits"),
    "export": ("compgen_tf.cli.export",
               "a trained run as a SavedModel: strings in, strings out"),
    "tune": ("compgen_tf.cli.tune", "keras-tuner search over a search-space file"),
    "reproduce": ("compgen_tf.cli.reproduce",
                  "several seeds of a model, summary in results/"),
    "report": ("compgen_tf.cli.report", "regenerate results/README.md and the plots"),
    "errors": ("compgen_tf.cli.error_analysis", "kinds of wrong translations of a run"),
    "plot-attention": ("compgen_tf.cli.plot_attention",
                       "attention heat map of one translation"),
    "plot-meta-attention": ("compgen_tf.cli.plot_meta_attention",
                            "memory and decoder attention of a meta seq2seq learner"),
    "plot-stack-filters": ("compgen_tf.cli.plot_stack_filters",
                           "what each stack of a trained StackLSTM does"),
}


def usage() -> str:
    """The top-level help: the usage line and every command of `COMMANDS`, one a line."""
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    return ("usage: python -m compgen_tf <command> [options]   (or: compgen-tf ...)\n\n"
            "commands:\n" + "\n".join(lines) +
            "\n\n`python -m compgen_tf <command> --help` lists a command's options;"
            " --verbose shows TensorFlow's log lines.")


def main(argv=None) -> int:
    """`python -m compgen_tf <command> [options]`: runs `command`'s module's `main`.

    Args:
        argv: the arguments after the program name (default: `sys.argv[1:]`); `--verbose`
            anywhere shows TensorFlow's log lines and is then dropped.

    Returns:
        The command's exit code; 0 for `--help`, 2 for no command or an unknown one.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    quiet_tensorflow_logs(argv)
    argv = [a for a in argv if a != "--verbose"]
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"error: unknown command {command!r}; one of: {', '.join(COMMANDS)}",
              file=sys.stderr)
        return 2
    select_backend(rest)  # before the command's module imports Keras
    with tensorflow_import_hidden():  # a command whose module imports TensorFlow at once
        module = importlib.import_module(COMMANDS[command][0])
    return module.main(rest)
