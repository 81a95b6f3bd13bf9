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
(`quiet_tensorflow_logs`: the command line's business, not the library's, whose import
leaves the host's streams alone). `--help` and a refused argument are answered before
TensorFlow is imported (the names offered come from `compgen_tf.names`); an argument error
is one line, `PROG: error: MESSAGE`, and exit code 2 (`ArgumentParser`).
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import os
import sys
from pathlib import Path

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


# Whether the command line shows TensorFlow's log lines (`quiet_tensorflow_logs`).
_verbose = False


def quiet_tensorflow_logs(argv) -> None:
    """What an entry point does first, before anything imports TensorFlow: unless
    `--verbose` is in `argv`, TensorFlow's log lines are hidden.

    Two kinds of lines, measured with TensorFlow 2.21 on this CPU. While a run trains,
    TensorFlow's C++ code logs through absl (`I0000 ... Memory patch applied`, `E0000 ...
    oneDNN supports DT_INT64 only on platforms with AVX-512`, an error-level line that a
    clean run prints): TF_CPP_MIN_LOG_LEVEL=3 hides them, set here only when the user has
    not set it (`TF_CPP_MIN_LOG_LEVEL=0` shows them again). It must be set before
    TensorFlow is imported, which reads it once. While TensorFlow is imported, its shared
    libraries print `WARNING: All log messages before absl::InitializeLog() is called are
    written to STDERR` and oneDNN's `oneDNN custom operations are on` whatever that
    variable says (absl writes them before TensorFlow's log level applies):
    `import_tensorflow_quietly` sends them to /dev/null.
    """
    global _verbose
    _verbose = "--verbose" in argv
    if not _verbose and "tensorflow" not in sys.modules:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


@contextlib.contextmanager
def _tensorflow_import_hidden():
    """Hides what TensorFlow prints while it is imported in the block, unless `--verbose`
    was given or it is imported already (a test calling a command's `main`)."""
    if _verbose or "tensorflow" in sys.modules:
        yield
    else:
        with _stderr_to_devnull():
            yield


def import_tensorflow_quietly() -> None:
    """Imports Keras (on its TensorFlow backend: TensorFlow) with its start-up lines hidden
    (see `quiet_tensorflow_logs`), then (on TensorFlow) the models, so that they are
    registered for `keras.saving.load_model` as after `import compgen_tf`. A command calls
    it once its arguments are parsed; an import error still shows, as its traceback is
    printed after the import."""
    with _tensorflow_import_hidden():
        import keras
    if keras.backend.backend() == "tensorflow":
        import compgen_tf.models  # noqa: F401  (registers the model classes for loading)


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser (its description printed as written) whose argument errors are one
    line on stderr, `PROG: error: MESSAGE`, and exit code 2, without the usage block."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        """Exits with code 2 after the one line of `message`."""
        self.exit(2, f"{self.prog}: error: {message}\n")


def name_of(kind: str, names, list_all: bool = True):
    """An argparse `type` that accepts the names of `names` and refuses any other in one
    line: "unknown KIND 'x'; choose from: a, b", or without `list_all` (a long list) the
    nearest names and where the whole list is."""
    names = tuple(names)

    def check(value: str) -> str:
        if value in names:
            return value
        if list_all:
            raise argparse.ArgumentTypeError(
                f"unknown {kind} {value!r}; choose from: {', '.join(names)}")
        nearest = difflib.get_close_matches(value, names, n=3, cutoff=0.5)
        raise argparse.ArgumentTypeError(
            f"unknown {kind} {value!r}" + (f"; nearest: {', '.join(nearest)}" if nearest else "")
            + "; --help lists them all")

    return check


def run_directory_missing(run) -> bool:
    """True, with the one line on stderr, when `run` (a `--run` argument) is no directory."""
    if Path(run).is_dir():
        return False
    print(f"error: run directory {run} does not exist", file=sys.stderr)
    return True


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
    with _tensorflow_import_hidden():  # a command whose module imports TensorFlow at once
        module = importlib.import_module(COMMANDS[command][0])
    return module.main(rest)
