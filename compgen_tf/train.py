"""Train a model on a SCAN split: `python -m compgen_tf.train --model syntactic_attention`.

Every hyperparameter comes from a configuration file (default: the committed
`configs/<model>/<split>.json`); `--set SECTION.KEY=VALUE` overrides any of them.
Rerunning the same command resumes an interrupted run.
"""

from __future__ import annotations

import argparse
import importlib
import math
import shlex
import sys

from compgen_tf import registry
from compgen_tf.config import (ConfigError, apply_overrides, check_learning_rate_schedule,
                               config_path, load_config)
from compgen_tf.distribute import STRATEGIES, StrategyError, make_strategy, worker_index

DEFAULT_MODEL = "syntactic_attention"
DEFAULT_SPLIT = {"seq2seq": "simple", "syntactic_attention": "addprim_jump"}


def build_parser() -> argparse.ArgumentParser:
    import tfds_scan

    parser = argparse.ArgumentParser(
        prog="python -m compgen_tf.train", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=DEFAULT_MODEL,
                        choices=sorted(registry.MODELS),
                        help=f"model to train (default: {DEFAULT_MODEL})")
    parser.add_argument("--split", choices=tfds_scan.CONFIG_NAMES, metavar="SPLIT",
                        help="SCAN split (default depends on the model); one of: "
                             + ", ".join(tfds_scan.CONFIG_NAMES))
    parser.add_argument("--task", help="task of a model that trains on toy or episodic data "
                                       "instead of a SCAN split: " + ", ".join(
                                           sorted(registry.TASK_MODELS)) + " (see README)")
    parser.add_argument("--config", help="configuration file (default: configs/MODEL/SPLIT.json)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--steps", type=int, help="override training.max_steps")
    budget.add_argument("--epochs", type=float, help="training length in passes over the data")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one configuration value (repeatable)")
    parser.add_argument("--output", help="run directory (default: runs/MODEL/SPLIT/seedN)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--verbose", action="store_true",
                        help="show TensorFlow's start-up log lines (hidden by default)")
    parser.add_argument("--strategy", choices=STRATEGIES, default="default",
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


def resolve_config(args) -> dict:
    split = args.split or DEFAULT_SPLIT.get(args.model, "simple")
    config = load_config(args.config or config_path(args.model, split))
    overrides = list(args.set)
    if args.steps is not None:
        overrides.append(f"training.max_steps={args.steps}")
    config = apply_overrides(config, overrides)
    check_learning_rate_schedule(config["training"], drops_once=False)
    config.update(model=args.model, split=split)
    registry.check_model_args(args.model, config["model_args"])
    if args.epochs is not None:
        from compgen_tf.runs import split_examples

        examples = len(split_examples(split, "fit", config["data"]))
        batch = config["training"].get("batch_size", 64)
        config["training"]["max_steps"] = max(1, math.ceil(args.epochs * examples / batch))
    return config


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    command = "python -m compgen_tf.train " + shlex.join(sys.argv[1:] if argv is None else argv)
    if (args.no_support_loss or args.no_decoder_attention) and args.model != "meta_seq2seq":
        parser.error("--no-support-loss and --no-decoder-attention are meta_seq2seq ablations")
    if args.model in registry.TASK_MODELS:
        if args.strategy != "default" or args.cpu_devices is not None:
            parser.error(f"--strategy and --cpu-devices apply to the SCAN models, not to "
                         f"{args.model}")
        module = importlib.import_module(registry.TASK_MODELS[args.model])
        return module.train_from_cli(args, command)
    if args.task is not None:
        parser.error(f"--task is for {', '.join(sorted(registry.TASK_MODELS)) or 'task models'}; "
                     f"{args.model} trains on a SCAN --split")
    # The strategy comes first: it must configure TensorFlow's devices before anything
    # (here the trial build of the model in resolve_config) initialises them.
    try:
        strategy = make_strategy(args.strategy, args.cpu_devices)
    except StrategyError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        config = resolve_config(args)
    except (ConfigError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    from compgen_tf.runs import default_run_dir, train_run

    run_dir = args.output or default_run_dir(config["model"], config["split"], args.seed)
    metrics = train_run(config, run_dir, seed=args.seed, verbose=0 if args.quiet else 1,
                        command=command, strategy=strategy)
    if metrics is None:
        print(f"worker {worker_index(strategy)} done; the chief evaluates {run_dir}")
        return 0
    accuracy = metrics["accuracy"]
    print(f"run {run_dir}: test exact match {accuracy['test']:.4f} "
          f"(validation {accuracy['validation']:.4f}, {metrics['steps']} steps, "
          f"{metrics['wall_time_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
