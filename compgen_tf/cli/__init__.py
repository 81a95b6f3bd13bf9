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
TensorFlow's start-up log lines (oneDNN, CPU features, absl) are hidden unless `--verbose`
is given, anywhere on the line (`import_tensorflow_quietly`: the command line's business, not
the library's, whose import leaves the host's streams alone).
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

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


@contextlib.contextmanager
def _stderr_to_devnull():
    """Sends file descriptor 2 to /dev/null for the duration (C++ writes go there too)."""
    sys.stderr.flush()
    try:
        saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    except OSError:  # no stderr to silence (started with 2>&-)
        yield
        return
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def import_tensorflow_quietly(argv) -> None:
    """Imports Keras (on its TensorFlow backend: TensorFlow) with file descriptor 2 sent to
    /dev/null unless `--verbose` is in `argv`, then (on TensorFlow) the models, so that they
    are registered for `keras.saving.load_model` as after `import compgen_tf`.

    TensorFlow 2.21 prints its start-up lines (oneDNN, CPU features, absl) while it is
    imported, before it reads TF_CPP_MIN_LOG_LEVEL (measured: the variable hides none of
    them). On the command line they are noise. An import error still shows, as its
    traceback is printed after the import. A process that has imported TensorFlow already
    (a test calling `main`) is left alone.
    """
    if "--verbose" not in argv and "tensorflow" not in sys.modules:
        with _stderr_to_devnull():
            import keras
    else:
        import keras
    if keras.backend.backend() == "tensorflow":
        import compgen_tf.models  # noqa: F401  (registers the model classes for loading)


def usage() -> str:
    """The top-level help: the usage line and every command of `COMMANDS`, one a line."""
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    return ("usage: python -m compgen_tf <command> [options]   (or: compgen-tf ...)\n\n"
            "commands:\n" + "\n".join(lines) +
            "\n\n`python -m compgen_tf <command> --help` lists a command's options;"
            " --verbose shows TensorFlow's start-up log lines.")


def main(argv=None) -> int:
    """`python -m compgen_tf <command> [options]`: runs `command`'s module's `main`.

    Args:
        argv: the arguments after the program name (default: `sys.argv[1:]`); `--verbose`
            anywhere shows TensorFlow's start-up lines and is then dropped.

    Returns:
        The command's exit code; 0 for `--help`, 2 for no command or an unknown one.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    import_tensorflow_quietly(argv)
    argv = [a for a in argv if a != "--verbose"]
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"error: unknown command {command!r}; one of: {', '.join(COMMANDS)}",
              file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[command][0])
    return module.main(rest)
