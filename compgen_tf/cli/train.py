"""Train one model: `python -m compgen_tf train --model syntactic_attention`.

    python -m compgen_tf train --model seq2seq --split simple --seed 1
    python -m compgen_tf train --model meta_seq2seq --task mutual_exclusivity
    python -m compgen_tf train --model stack_lstm --task palindromes --epochs 2

`python -m compgen_tf.train ARGS` (what `make train` runs) is the same command.

A SCAN model trains on a `--split`, meta seq2seq and the toy-task models on a `--task`.
Every hyperparameter comes from a configuration file (default: the committed
`configs/<model>/<split or task>.json`); `--set SECTION.KEY=VALUE` overrides any of them.
The run directory (default `runs/<model>/<split or task>/seed<N>`) is resumed when the same
command runs again; a finished run is not trained again. On a terminal one progress bar
covers the whole run; elsewhere (a log file) each evaluation prints one plain line.
"""
# The `train` command: `python -m compgen_tf train` and `python -m compgen_tf.train` (the
# module of its own that `make train` runs, `compgen_tf/train.py`) run `main`.

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from compgen_tf import names
from compgen_tf.cli.common import (ArgumentParser, add_backend_argument, check_backend,
                                   import_tensorflow_quietly, name_of, name_or_folder)

DEFAULT_MODEL = "syntactic_attention"
DEFAULT_SPLIT = {"seq2seq": "simple", "syntactic_attention": "addprim_jump"}


def build_parser() -> ArgumentParser:
    """The parser of `train`: `--model` and `--split` choose among the registered ones
    (`compgen_tf.names`: no TensorFlow is imported to list them)."""
    parser = ArgumentParser(prog="python -m compgen_tf train", description=__doc__)
    parser.add_argument("--model", default=DEFAULT_MODEL, metavar="MODEL",
                        type=name_of("model", names.MODELS),
                        help=f"model to train (default: {DEFAULT_MODEL}), one of: "
                             + ", ".join(names.MODELS))
    parser.add_argument("--split", type=name_or_folder("split", names.SPLITS),
                        metavar="SPLIT",
                        help="SCAN split (default depends on the model); one of: "
                             + ", ".join(names.SCAN_SPLITS) + "; or the English-French "
                             "set: " + ", ".join(names.MT_SPLITS) + "; or, for "
                             "seq2seq, the composition toy task: composition; or COGS "
                             "(seq2seq, syntactic_attention): " + ", ".join(names.COGS_SPLITS)
                             + "; or, for seq2seq and syntactic_attention, a data folder of "
                             "your own (a value with a '/' or naming a directory: train.tsv "
                             "and any of dev.tsv, test.tsv, gen.tsv; docs/guide.md, 'Your own "
                             "data')")
    parser.add_argument("--task", help="task of a model that trains on episodes or a toy "
                                       "task instead of a SCAN split: " + ", ".join(
                                           name for name, kind in names.MODELS.items()
                                           if kind != "scan"))
    parser.add_argument("--config", help="configuration file (default: configs/MODEL/SPLIT.json)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--steps", type=int, help="override training.max_steps")
    budget.add_argument("--epochs", type=float, help="training length in passes over the data")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one configuration value (repeatable)")
    parser.add_argument("--output", help="run directory (default: runs/MODEL/SPLIT/seedN)")
    parser.add_argument("--evaluate-splits", nargs="+", metavar="SPLIT",
                        help="SCAN models: the splits scored after training (default: train, "
                             "validation and test, and daxy on the English-French splits, gen on "
                             "COGS; "
                             "scoring SCAN's whole training set takes a while)")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress: neither the bar (on a terminal) nor the line of "
                             "each evaluation (elsewhere, e.g. in a log file)")
    parser.add_argument("--verbose", action="store_true",
                        help="show TensorFlow's log lines (hidden by default)")
    add_backend_argument(parser)
    parser.add_argument("--strategy", choices=names.STRATEGIES, default="default",
                        help="tf.distribute strategy: default (one device), mirrored (every "
                             "visible GPU), multi_worker (the cluster in TF_CONFIG; run the same "
                             "command on every worker)")
    parser.add_argument("--cpu-devices", type=int, metavar="N",
                        help="with --strategy mirrored: mirror over N logical CPU devices "
                             "(testing without GPUs)")
    parser.add_argument("--no-support-loss", action="store_true",
                        help="meta_seq2seq ablation: no support items among the queries")
    parser.add_argument("--no-decoder-attention", action="store_true",
                        help="meta_seq2seq ablation: the decoder sees only the last context")
    return parser


def main(argv=None) -> int:
    """`python -m compgen_tf.train` (`python -m compgen_tf train`): trains one run and
    prints its scores.

    Checks that the model takes a `--split` or a `--task` as given, builds the strategy
    (SCAN models) before anything initialises TensorFlow's devices, resolves the
    configuration and trains in the run directory (resumed if it exists).

    Returns:
        0 when the run is trained (a multi-worker worker: when its part is done); 2 when
        an argument, the configuration or the run directory is refused.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    import_tensorflow_quietly()
    check_backend(parser, args)
    import keras

    if keras.backend.backend() != "tensorflow" and (args.strategy != "default"
                                                    or args.cpu_devices is not None):
        parser.error(f"--strategy and --cpu-devices are tf.distribute's: they apply on the "
                     f"tensorflow backend, not on {keras.backend.backend()}")
    from compgen_tf import registry
    from compgen_tf.errors import ConfigError, RunDirectoryError
    from compgen_tf.experiments.episodes import ablation_overrides
    from compgen_tf.experiments.kinds import experiment_for
    from compgen_tf.experiments.scan import evaluated_splits
    from compgen_tf.training.distribute import StrategyError, make_strategy, worker_index

    # The form that results files record and `reproduce --check` reads back.
    command = "python -m compgen_tf.train " + shlex.join(sys.argv[1:] if argv is None else argv)
    spec = registry.spec(args.model)
    experiment = experiment_for(spec)
    if (args.no_support_loss or args.no_decoder_attention) and args.model != "meta_seq2seq":
        print("error: --no-support-loss and --no-decoder-attention are meta_seq2seq ablations",
              file=sys.stderr)
        return 2
    refused = None
    if spec.trains_on == "scan":
        if args.task is not None:
            refused = f"{args.model} trains on a SCAN --split, not a --task"
        task = args.split or DEFAULT_SPLIT.get(args.model, "simple")
    else:
        task = args.task
        if args.split is not None:
            refused = f"{args.model} trains on a --task, not a SCAN --split"
        elif args.strategy != "default" or args.cpu_devices is not None:
            refused = (f"--strategy and --cpu-devices apply to the SCAN models, not to "
                       f"{args.model}")
        elif args.task is None:
            refused = f"{args.model} needs --task, one of: {', '.join(spec.tasks)}"
    if refused:
        print(f"error: {refused}", file=sys.stderr)
        return 2
    options = {}
    if args.evaluate_splits is not None:
        if spec.trains_on != "scan":
            print(f"error: --evaluate-splits applies to the SCAN models, not to {args.model}",
                  file=sys.stderr)
            return 2
        try:
            known = evaluated_splits(task)
        except ValueError as error:  # a data folder that cannot be read
            print(f"error: {error}", file=sys.stderr)
            return 2
        unknown = [name for name in args.evaluate_splits if name not in known]
        if unknown:
            print(f"error: --evaluate-splits: {', '.join(unknown)} is not a split of "
                  f"{task} (its splits: {', '.join(known)})", file=sys.stderr)
            return 2
        options["evaluate_splits"] = tuple(args.evaluate_splits)
    if spec.trains_on == "scan":
        # The strategy comes first: it must configure TensorFlow's devices before anything
        # (TFDS, reading the data for an `--epochs` budget) initialises them.
        try:
            options["strategy"] = make_strategy(args.strategy, args.cpu_devices)
        except StrategyError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    overrides = list(args.set) + ablation_overrides(args)
    try:
        config = experiment.resolve_config(args.model, task, args.config, overrides, args.steps,
                                           args.epochs)
    except (ConfigError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    run_dir = Path(args.output or Path("runs") / args.model / experiment.run_name(config.task)
                   / f"seed{args.seed}")
    try:
        metrics = experiment.train(config, run_dir, seed=args.seed,
                                   verbose=0 if args.quiet else 1, command=command, **options)
    except (ConfigError, RunDirectoryError) as error:  # a bad model argument, a used --output
        print(f"error: {error}", file=sys.stderr)
        return 2
    if metrics is None:
        print(f"worker {worker_index(options['strategy'])} done; the chief evaluates {run_dir}")
        return 0
    accuracy = metrics["accuracy"]
    others = ", ".join(f"{part} {value:.4f}" for part, value in accuracy.items()
                       if part != "test")
    test = f"test exact match {accuracy['test']:.4f} " if "test" in accuracy else ""
    print(f"run {run_dir}: {test}({others}, {metrics['steps']} steps, "
          f"{metrics['wall_time_s']} s)")
    return 0

