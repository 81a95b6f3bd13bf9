"""What every command shares: TensorFlow's log lines hidden, its import deferred until the
arguments are parsed, and argument errors in one line.

An entry point (`compgen_tf.cli.main`, `python -m compgen_tf.train`) calls
`quiet_tensorflow_logs` before anything imports TensorFlow; a command builds its parser
with `ArgumentParser` (the names it offers from `compgen_tf.names`, checked with `name_of`),
parses, and only then calls `import_tensorflow_quietly` and imports what it runs, so that
`--help` and a refused argument answer at once.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import json
import os
import sys
from pathlib import Path

from compgen_tf import names


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


def select_backend(argv) -> None:
    """What an entry point does before anything imports Keras: `--backend NAME` (or
    `--backend=NAME`) in `argv` sets `KERAS_BACKEND`, which Keras reads once, at import.

    A name outside `names.BACKENDS` is left for the command's parser to refuse (one line,
    exit 2); so is a backend other than the one of a Keras imported already (a test or a
    notebook calling a command's `main`): `check_backend` says so after parsing.
    """
    for i, arg in enumerate(argv):
        value = (argv[i + 1] if arg == "--backend" and i + 1 < len(argv)
                 else arg.split("=", 1)[1] if arg.startswith("--backend=") else None)
        if value in names.BACKENDS and "keras" not in sys.modules:
            os.environ["KERAS_BACKEND"] = value


def add_backend_argument(parser) -> None:
    """`--backend {tensorflow,jax}` of a command that trains (`select_backend`)."""
    parser.add_argument(
        "--backend", choices=names.BACKENDS, default=None,
        help="Keras backend to train on (default: KERAS_BACKEND, else tensorflow); data, "
             "export and serving stay TensorFlow's, and a run resumes only on the backend "
             "it started on")


def check_backend(parser, args) -> None:
    """Refuses (one line, exit 2) a `--backend` that the imported Keras does not run."""
    import keras

    if args.backend is not None and keras.backend.backend() != args.backend:
        parser.error(f"--backend {args.backend}: Keras was imported already on its "
                     f"{keras.backend.backend()} backend in this process; run the command "
                     "in a process of its own (or set KERAS_BACKEND before importing Keras)")


@contextlib.contextmanager
def tensorflow_import_hidden():
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
    with tensorflow_import_hidden():
        import keras

        if keras.backend.backend() != "tensorflow":
            try:  # the data and the export are TensorFlow's on every backend
                import tensorflow  # noqa: F401
            except ImportError:
                pass
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


def name_or_folder(kind: str, names):
    """`name_of(kind, names, list_all=False)` that also accepts a data folder: a value with
    a path separator, or one naming an existing directory that is none of `names` (the rule
    of `tfds_scan.folder_pairs.is_folder`, here without importing TensorFlow)."""
    check_name = name_of(kind, names, list_all=False)

    def check(value: str) -> str:
        separators = [os.sep] + ([os.altsep] if os.altsep else [])
        if value not in names and (any(s in value for s in separators)
                                   or os.path.isdir(value)):
            return value
        return check_name(value)

    return check


def run_directory_missing(run) -> bool:
    """True, with the one line on stderr, when `run` (a `--run` argument) is no directory."""
    if Path(run).is_dir():
        return False
    print(f"error: run directory {run} does not exist", file=sys.stderr)
    return True


def split_runs_tool(tool: str, description: str, analyse, argv=None, provenance=None,
                    about_split=None) -> int:
    """The command line of a tool that reads finished runs' test errors on one SCAN split:
    `--split SPLIT --runs RUN [RUN ...] [--out FILE [--keep-earlier]]`.

    `--keep-earlier` keeps the runs that `--out` already holds (of the same split) and are
    not given again, with the commands that wrote them under `earlier_commands`: a seed whose
    run directory is gone keeps its committed figures when later seeds are added.

    Args:
        tool: the tool's file name under `tools/`.
        description: its help text (the tool's docstring).
        analyse: `analyse(examples, rows)` -> the dict of one run, from the split's
            `{"train": [(command, actions)], "test": [...]}` and the run's wrong test
            translations; a ValueError names a bad row.
        argv: the arguments; None for the process's own.
        provenance: the result's provenance; None for `official_or_dev_provenance(split)`.
        about_split: `about_split(examples)` -> entries about the split itself, put before
            the runs; None for none.

    Returns:
        0; 2 after one line on standard error for an unknown split, a run without
        `errors_test.jsonl` or a row that is not a test command.
    """
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", required=True)
    parser.add_argument("--runs", nargs="+", required=True)
    parser.add_argument("--out")
    parser.add_argument("--keep-earlier", action="store_true",
                        help="keep --out's runs that are not given here")
    args = parser.parse_args(argv)
    earlier = {"per_run": []}
    if args.keep_earlier:
        if not args.out:
            parser.error("--keep-earlier needs --out")
        if Path(args.out).exists():
            earlier = json.loads(Path(args.out).read_text())
            if earlier.get("split") != args.split:
                parser.error(f"--keep-earlier: {args.out} is of split "
                             f"{earlier.get('split')!r}, not {args.split!r}")

    import tfds_scan

    from compgen_tf.analysis.output import emit, official_or_dev_provenance, read_test_errors

    try:
        examples = tfds_scan.split_examples(args.split)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    per_run = []
    for run in args.runs:
        try:
            per_run.append({"run": run, **analyse(examples, read_test_errors(run))})
        except (FileNotFoundError, ValueError) as error:
            print(f"error: {run}: {error}", file=sys.stderr)
            return 2
    given = {run["run"] for run in per_run}
    kept = [run for run in earlier["per_run"] if run["run"] not in given]
    result = {"split": args.split, **(about_split(examples) if about_split else {}),
              "per_run": kept + per_run,
              "provenance": provenance or official_or_dev_provenance(args.split)}
    if kept:
        result["earlier_commands"] = earlier.get("earlier_commands", []) + [earlier["command"]]
    emit(result, args.out, tool, argv)
    return 0
