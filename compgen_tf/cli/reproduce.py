"""Train several seeds of any registered model and write its results file:
`python -m compgen_tf reproduce`.

    python -m compgen_tf reproduce --model seq2seq --split simple --seeds 3
    python -m compgen_tf reproduce --model meta_seq2seq --task add_jump_permutation --seeds 3
    python -m compgen_tf reproduce --model stack_lstm --task palindromes --seeds 5

Each seed is an ordinary run directory (`runs/<model>/<name>/seed<N>`); seeds
that already finished are not trained again, interrupted ones resume, and a finished seed
of another configuration is refused. The results go to `results/<model>/<name>.json`
(name = the split or task unless `--name` is given, e.g. for an ablation config; a toy task
with several test splits writes one file per test split, e.g. `palindromes_in_domain` and
`palindromes_long`, with `--name`'s suffix after the task). A results file that already
holds seeds keeps them (`--first-seed` adds more) and refuses another configuration. Its
`provenance` is the configuration file's (how its settings were chosen); settings changed
with `--set`, `--steps` or an ablation flag are not on record and are labelled so. The
command recorded there leaves out `--jobs`, `--runs-dir` and `--results-dir`, which change
where and how fast, not what.

`--jobs N` trains N seeds at a time in separate processes.

`--continue-from NAME` makes a longer run without training its first part again: with a
configuration that differs from the finished runs `<runs-dir>/<model>/NAME/seed<N>` only in a
larger `training.max_steps`, each seed starts from its own run's last checkpoint (copied into
its new run directory; the earlier run is left as it is) and trains on as the longer run of
that seed would have (the same weights, data order and draws; the patience count starts
afresh, and its `metrics.json` records where it started under `warm_start`; its wall time is
the continuation's own; the results file's `continued_from` has the time before it). A
shorter run that stopped before its `max_steps`, one trained on another backend, a learning
rate that drops at half of `max_steps`, and anything else that differs are refused in one
line, exit code 2;
`--check` trains a continued seed straight through, which gives the same run.

`reproduce --check results/<model>/<name>.json --seed N` trains one committed seed again from
the command recorded for it and prints how far the new scores are from the recorded ones
(`compgen_tf.experiments.check`). A process claims a
seed by holding an exclusive lock on `seed<N>.lock` beside its run directory
while it trains, so any number of `reproduce` commands sharing a runs
directory (on one machine or on a shared file system with working `flock`)
split the seeds between them: none is trained twice, and each command waits for
the seeds the others are training before it writes the summary.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from compgen_tf import names
from compgen_tf.cli.common import (ArgumentParser, add_backend_argument, check_backend,
                                   import_tensorflow_quietly, name_of)
# Both read no TensorFlow: the parser's defaults and the recorded command are made before
# the training modules (which import it) are, so that `--help` answers at once.
from compgen_tf.experiments.results import RESULTS_DIR, without_options

if TYPE_CHECKING:  # the annotation only: importing it for real imports TensorFlow
    from compgen_tf.experiments.reproduce import Reproduction

COMMAND = "python -m compgen_tf reproduce"
# What `reproduce --check --help` says.
CHECK_HELP = """Does a committed seed come back? `python -m compgen_tf reproduce --check FILE --seed N`.

    python -m compgen_tf reproduce --check results/stack_lstm/palindromes_long.json --seed 0

Trains seed N again from the command recorded for it in the results file (the command that
trained that seed, in today's command-line form: `compgen_tf.reproduce`, `toy_runs` and
`meta_training` of earlier versions become `reproduce`), in a run directory of its own
(`--runs-dir`, default `runs/check`), and prints the recorded and the new validation and test
accuracies and training lengths (steps, best step), their differences, the commits of both, and whether the configuration resolved
today equals the one the file recorded (a difference there, or another commit, explains a
drift before the machine does), the environment variables that change TensorFlow's
kernels, and whether the new test accuracy lands in band: within the [min, max] of the test
accuracies of all the file's seeds, ends included (one seed: that value). `--backend jax`
trains the seed on another backend than the one it was recorded on (the comparison names
both). `--out FILE` also writes this as JSON. Exit code 0 when the seed trained, whatever
the difference; 2 when the file or seed cannot be checked or the run directory exists.
"""


def build_parser() -> ArgumentParser:
    """The parser of `reproduce` (without `--check`, which `check_main` parses)."""
    parser = ArgumentParser(prog=COMMAND, description=__doc__)
    parser.add_argument("--model", required=True, type=name_of("model", names.MODELS),
                        help="one of: " + ", ".join(names.MODELS))
    task = parser.add_mutually_exclusive_group(required=True)
    task.add_argument("--split", dest="task", metavar="SPLIT",
                      help="SCAN split of a SCAN model")
    task.add_argument("--task", dest="task", metavar="TASK",
                      help="task of meta_seq2seq (episodes) or of a toy-task model")
    parser.add_argument("--seeds", type=int, default=3, help="number of seeds (default: 3)")
    parser.add_argument("--first-seed", type=int, default=0,
                        help="train seeds FIRST..FIRST+N-1 (default: 0)")
    parser.add_argument("--config", help="configuration file (default: configs/MODEL/TASK.json)")
    parser.add_argument("--name", help="run and results name (default: the split or task)")
    parser.add_argument("--steps", type=int, help="override training.max_steps")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one configuration value (repeatable)")
    parser.add_argument("--no-support-loss", action="store_true",
                        help="meta_seq2seq ablation: --set model_args.support_loss=false")
    parser.add_argument("--no-decoder-attention", action="store_true",
                        help="meta_seq2seq ablation: --set model_args.decoder_attention=false")
    parser.add_argument("--runs-dir", default="runs", help="parent of the run directories")
    parser.add_argument("--results-dir", default=str(RESULTS_DIR))
    parser.add_argument("--jobs", type=int, default=1,
                        help="seeds trained at a time, each in its own process")
    add_backend_argument(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--continue-from", metavar="NAME",
                        help="continue each seed from the finished run NAME/seed<N> of the "
                             "same model under --runs-dir, of this configuration but for "
                             "fewer training.max_steps (a longer run without training the "
                             "first part again)")
    parser.add_argument("--no-results", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv=None) -> int:
    """`python -m compgen_tf reproduce`: trains the seeds and writes the results file,
    or with `--check` retrains one recorded seed (`check_main`).

    Returns:
        0 when done; 1 when a seed did not train (`ReproduceFailed`); 2 when the request,
        a configuration, a results file or a run directory is refused.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if any(arg == "--check" or arg.startswith("--check=") for arg in argv):
        return check_main(argv)
    request = reproduction(argv)
    if isinstance(request, int):
        return request
    from compgen_tf.experiments.reproduce import ReproduceFailed, reproduce

    try:
        reproduce(request)
    except ValueError as error:  # a configuration, results file or run directory
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ReproduceFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    return 0


def reproduction(argv) -> Reproduction | int:
    """The `Reproduction` that `reproduce ARGV` asks for, or the exit code of a refusal
    (its one line printed); a parse error exits with argparse's code 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.seeds < 1 or args.jobs < 1 or args.first_seed < 0:
        parser.error("--seeds and --jobs must be at least 1, --first-seed at least 0")
    import_tensorflow_quietly()
    check_backend(parser, args)
    from compgen_tf import registry
    from compgen_tf.experiments.episodes import ablation_overrides
    from compgen_tf.experiments.kinds import experiment_for
    from compgen_tf.experiments.reproduce import Reproduction

    spec = registry.spec(args.model)
    flag = "--split" if experiment_for(spec).kind == "scan" else "--task"
    if _option(argv, "--split" if flag == "--task" else "--task") is not None:
        print(f"error: {args.model} trains on a {flag}, one of: {', '.join(spec.tasks)}",
              file=sys.stderr)
        return 2
    if (args.no_support_loss or args.no_decoder_attention) and args.model != "meta_seq2seq":
        print("error: --no-support-loss and --no-decoder-attention are meta_seq2seq ablations",
              file=sys.stderr)
        return 2
    # The recorded command leaves out what only says where files go or how many processes
    # share the work, so that it reproduces the results from the repository root.
    command = f"{COMMAND} " + shlex.join(
        without_options(argv, ("--jobs", "--runs-dir", "--results-dir")))
    return Reproduction(
        model=args.model, task=args.task, seeds=args.seeds, first_seed=args.first_seed,
        config_file=args.config, name=args.name,
        overrides=tuple(args.set) + tuple(ablation_overrides(args)), steps=args.steps,
        runs_dir=args.runs_dir, results_dir=args.results_dir,
        write_results=not args.no_results, quiet=args.quiet, command=command,
        helper_command=(sys.executable, "-m", "compgen_tf", "reproduce",
                        *without_options(argv, ("--jobs",)), "--no-results"),
        jobs=args.jobs, continue_from=args.continue_from)


def _option(argv, name):
    """The value of option `name` in `argv` (`--name V` or `--name=V`), or None."""
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def check_main(argv) -> int:
    """`reproduce --check RESULTS_FILE --seed N` (`compgen_tf.experiments.check`)."""
    parser = ArgumentParser(prog="python -m compgen_tf reproduce --check", description=CHECK_HELP)
    parser.add_argument("--check", required=True, metavar="RESULTS_FILE")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--runs-dir", default="runs/check")
    parser.add_argument("--out", help="also write the comparison as JSON")
    add_backend_argument(parser)
    args = parser.parse_args(argv)
    import_tensorflow_quietly()
    check_backend(parser, args)
    from compgen_tf.experiments import check
    from compgen_tf.experiments.reproduce import ReproduceFailed

    try:
        recorded = check.recorded_seed(args.check, args.seed)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    arguments = recorded.arguments + [
        "--first-seed", str(args.seed), "--seeds", "1", "--runs-dir", args.runs_dir,
        "--no-results"] + ([] if "--quiet" in recorded.arguments else ["--quiet"])
    if args.backend is not None:  # the seed again on another backend than it was recorded on
        arguments = without_options(arguments, ("--backend",)) + ["--backend", args.backend]
    request = reproduction(arguments)
    if isinstance(request, int):
        return request
    try:
        report = check.check_seed(recorded, request, f"{COMMAND} {shlex.join(arguments)}")
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except ReproduceFailed as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    for line in check.report_lines(report):
        print(line)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return 0
