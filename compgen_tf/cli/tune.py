"""Hyperparameter search with keras-tuner: `python -m compgen_tf tune`.

    python -m compgen_tf tune --model syntactic_attention --split addprim_jump \\
        --tuner hyperband --max-epochs 27
    python -m compgen_tf tune --model seq2seq --split simple --tuner random --max-trials 20 \\
        --steps 3000

Every registered model can be tuned: a SCAN model on a `--split`, meta seq2seq and the
toy-task models on a `--task`.

    python -m compgen_tf tune --model stack_lstm --task palindromes --tuner random \
        --max-trials 10 --steps 500

The search is keras-tuner's own flow: a `RunHyperModel` (a `keras_tuner.HyperModel`) whose
`build(hp)` makes the task model of the trial's configuration (one set of hyperparameter
values applied to `configs/<model>/<split or task>.json`, or `--config`, after the `--set`
overrides) and whose `fit(hp, model, ...)` trains it as one run of the library (the model's
experiment: `fit` with the library's callbacks) in the trial's run directory,
`OUTPUT/<tuner>/trial_<id>/run`. The objective is the exact-match accuracy on the
VALIDATION data carved from train (`val_exact_match`, maximised; the toy tasks' accuracy);
the test data are never evaluated during a search. `tuner.get_best_models()` loads the
best trials' selected models from their run directories.

Search space: `configs/<model>/search_space.json` (or `--search-space FILE`), a JSON
object mapping `section.key` to a spec:

    {"notes": "where the ranges come from",
     "model_args.hidden_units": {"type": "int", "min": 32, "max": 256, "step": 32},
     "model_args.dropout": {"type": "float", "min": 0.0, "max": 0.5, "step": 0.1},
     "training.learning_rate": {"type": "choice", "values": [0.0003, 0.001, 0.003]},
     "training.jit_compile": {"type": "boolean"}}

`int` and `float` take `min`, `max` and optionally `step` and `sampling` (`linear`,
`log`, `reverse_log`). A key also given with `--set` is fixed at that value and
removed from the search.

Training budget of a trial:
- `--tuner hyperband`: keras-tuner hands each trial an epoch budget (`tuner/epochs`,
  at most `--max-epochs`, default 27, shrinking by `--factor`); it becomes
  `training.max_steps` = epochs x steps per epoch, where an epoch is `--steps N`
  steps if given, else one pass over the fit data (ceil(examples / batch size) of
  that trial; for meta seq2seq, which draws a new episode at every step, `eval_every` steps). A trial promoted from a shorter one (the `from` column) continues
  that trial's run from its last checkpoint (weights, optimizer, data position, best
  score) up to its own budget, as keras-tuner's Hyperband does with `fit`; its
  metrics.json records `warm_start`. The full schedule of `--max-epochs 27 --factor 3` is 70
  trials with 450 epochs of budget in all (`--max-epochs 9`: 23 trials, 87 epochs), of
  which a promoted trial trains only its extra epochs; `--max-trials` caps it.
- `--tuner random` / `bayesian`: `--steps N` fixes `training.max_steps`,
  `--max-epochs N` sets it to N passes over the fit split; with neither, the
  configuration's own `max_steps` applies. Early stopping (patience) still applies.
  `bayesian` needs scipy and scikit-learn (`pip install 'keras-tuner[bayesian]'`).

Resuming: rerunning the same command continues the search. keras-tuner reloads its
state from `OUTPUT/<tuner>/` (finished trials are not run again; an interrupted trial
is retried, and its run directory resumes from its last checkpoint). A larger
`--max-trials` extends a finished search; any other change (model, split, tuner,
seed, search space, base configuration, budget) is refused: pass another `--output`.

Outputs (default `OUTPUT` = `runs/tune/<model>/<split or task>`): `trials.md` and
`trials.json` (the trials ranked by validation exact match, with their
hyperparameters, steps and wall time), `best_config.json` (the best trial's full
configuration, accepted by `python -m compgen_tf train --config`), and
`search.json` (the settings that a rerun must match).

GPU: TensorFlow, and therefore every trial, uses a visible GPU automatically (with
the `gpu` extra installed); `CUDA_VISIBLE_DEVICES=1` picks the second GPU and
`CUDA_VISIBLE_DEVICES=` hides them all. Trials run one after another.

Distributed search (`--distributed`): keras-tuner's own chief/worker mode. Start
the same command once per process, with three environment variables:
`KERASTUNER_ORACLE_IP` / `KERASTUNER_ORACLE_PORT`, the address where the chief
serves the oracle (gRPC), and `KERASTUNER_TUNER_ID`: `chief` for the one process
that runs the oracle (it trains nothing), a distinct name (`tuner0`, `tuner1`, ...)
for each worker, which asks the chief for trials and trains them one after another.

    KERASTUNER_TUNER_ID=chief KERASTUNER_ORACLE_IP=10.0.0.1 KERASTUNER_ORACLE_PORT=8000 \
        python -m compgen_tf tune --model seq2seq --split simple --tuner random --distributed
    KERASTUNER_TUNER_ID=tuner0 KERASTUNER_ORACLE_IP=10.0.0.1 KERASTUNER_ORACLE_PORT=8000 \
        python -m compgen_tf tune --model seq2seq --split simple --tuner random --distributed

Every process must get the same arguments, and `--output` must be one directory
that all of them see (a shared file system across machines): the workers write
the trials' run directories there, and the chief, which ends when the last
trial has, writes the ranked table and `best_config.json` once. The workers
only train; each trial records its worker in `trial_<id>/worker.json` and in
the `worker` column of the table. Restarting a lost worker with the same
`KERASTUNER_TUNER_ID` is safe; restarting the chief continues the search from
its saved state, like an ordinary rerun.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from compgen_tf import names
from compgen_tf.cli.common import (ArgumentParser, add_backend_argument, check_backend,
                                   import_tensorflow_quietly, name_of)
from compgen_tf.errors import ConfigError
from compgen_tf.names import DEFAULT_MAX_EPOCHS, DEFAULT_MAX_TRIALS, TUNERS


def build_parser() -> ArgumentParser:
    """The parser of `tune` (its options are described in the module docstring)."""
    parser = ArgumentParser(prog="python -m compgen_tf tune", description=__doc__)
    parser.add_argument("--model", required=True, type=name_of("model", names.MODELS),
                        help="one of: " + ", ".join(names.MODELS))
    task = parser.add_mutually_exclusive_group(required=True)
    task.add_argument("--split", dest="task", metavar="SPLIT", help="SCAN split of a SCAN model")
    task.add_argument("--task", dest="task", metavar="TASK",
                      help="task of meta_seq2seq (episodes) or of a toy-task model")
    parser.add_argument("--tuner", default="hyperband", choices=TUNERS,
                        help="search algorithm (default: hyperband)")
    parser.add_argument("--max-trials", type=int,
                        help=f"number of trials (random/bayesian, default {DEFAULT_MAX_TRIALS}); "
                             "an optional cap for hyperband")
    parser.add_argument("--max-epochs", type=int,
                        help=f"hyperband: largest budget in epochs (default {DEFAULT_MAX_EPOCHS}); "
                             "random/bayesian: training length in passes over the fit split")
    parser.add_argument("--factor", type=int, default=3,
                        help="hyperband reduction factor (default: 3)")
    parser.add_argument("--steps", type=int,
                        help="random/bayesian: training.max_steps of every trial; hyperband: "
                             "steps per budget epoch (default: one pass over the fit split)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the search and of every trial's training (default: 0)")
    parser.add_argument("--config",
                        help="base configuration (default: configs/MODEL/SPLIT_OR_TASK.json)")
    parser.add_argument("--search-space", metavar="FILE",
                        help="search space (default: configs/MODEL/search_space.json)")
    parser.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                        help="override one base configuration value; a searched key set here "
                             "is fixed and leaves the search (repeatable)")
    parser.add_argument("--output",
                        help="output directory (default: runs/tune/MODEL/SPLIT_OR_TASK)")
    parser.add_argument("--distributed", action="store_true",
                        help="keras-tuner chief/worker mode: this process is the chief or a "
                             "worker, as KERASTUNER_TUNER_ID says (see above)")
    add_backend_argument(parser)
    parser.add_argument("--quiet", action="store_true", help="no per-trial keras-tuner report")
    return parser


def _check_numbers(args):
    for name in ("max_trials", "max_epochs", "steps"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    if args.factor < 2:
        raise ConfigError(f"--factor must be >= 2, got {args.factor}")
    if args.tuner != "hyperband" and args.steps and args.max_epochs:
        raise ConfigError(f"--tuner {args.tuner}: give --steps or --max-epochs, not both")
    if args.tuner == "bayesian":
        try:
            import scipy  # noqa: F401
            import sklearn  # noqa: F401
        except ImportError as error:
            raise ConfigError("--tuner bayesian needs scipy and scikit-learn "
                              f"(pip install 'keras-tuner[bayesian]'): {error}") from None


def main(argv=None) -> int:
    """`python -m compgen_tf tune`: runs (or resumes) the search and writes its report.

    Returns:
        0 when the search ended with a completed trial (a distributed worker: when no
        trial is left); 1 when it stopped on failed trials or none completed; 2 when an
        argument, the configuration or the search space is refused, or the output holds
        another search.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    import_tensorflow_quietly()
    check_backend(parser, args)
    from compgen_tf import registry
    from compgen_tf.experiments.kinds import experiment_for
    from compgen_tf.experiments.search_space import (SearchSpaceError, load_search_space,
                                                     search_space_path)
    from compgen_tf.experiments.tune import (OBJECTIVE, distributed_role, make_tuner,
                                             record_search, worker_id, write_report)

    argv = sys.argv[1:] if argv is None else list(argv)
    command = "python -m compgen_tf tune " + shlex.join(argv)
    spec = registry.spec(args.model)
    output = Path(args.output or Path("runs") / "tune" / args.model
                  / experiment_for(spec).run_name(args.task))
    flag = "--split" if spec.trains_on == "scan" else "--task"
    if ("--task" if flag == "--split" else "--split") in argv:
        print(f"error: {args.model} trains on a {flag}, one of: {', '.join(spec.tasks)}",
              file=sys.stderr)
        return 2
    try:
        _check_numbers(args)
        role = distributed_role() if args.distributed else None
        if role is None and os.environ.get("KERASTUNER_ORACLE_IP"):
            raise ConfigError("KERASTUNER_ORACLE_IP is set: keras-tuner would run a distributed "
                              "search; pass --distributed, or unset it")
        resolved = experiment_for(spec).resolve_config(args.model, args.task, args.config,
                                                       args.set)
        # The search works on the configuration's JSON form: a trial lays its values over it.
        base = resolved.to_json()
        if resolved.training.selection != "exact_match":
            # Trials are ranked on validation exact match, which is about 0 for every
            # translation trial: a search there would rank noise.
            raise ConfigError("tune ranks trials on validation exact match; a configuration "
                              f"with training.selection {resolved.training.selection!r} "
                              "cannot be searched")
        space_file = Path(args.search_space or search_space_path(args.model))
        specs = load_search_space(space_file, args.model, base)
        fixed = sorted(name.partition("=")[0] for name in args.set
                       if name.partition("=")[0] in specs)
        for name in fixed:
            del specs[name]
            print(f"{name} is fixed by --set: not searched", flush=True)
        if not specs:
            raise SearchSpaceError(f"{space_file}: every searched key is fixed by --set; "
                                   f"nothing left to search")
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    settings = {"model": args.model, "split": args.task, "tuner": args.tuner,
                "seed": args.seed, "steps": args.steps, "max_epochs": args.max_epochs,
                "factor": args.factor if args.tuner == "hyperband" else None,
                "base_config": base, "search_space": specs}
    try:
        record_search(output, settings, command)
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    tuner = make_tuner(args.tuner, base, specs, output, seed=args.seed,
                       max_trials=args.max_trials, steps=args.steps,
                       max_epochs=args.max_epochs, factor=args.factor, command=command,
                       verbose=0 if args.quiet else 1)
    failure = None
    try:
        tuner.search()
    except RuntimeError as error:  # keras-tuner: too many consecutive failed trials
        failure = error
    if role == "worker":
        # The chief owns the trials' results and writes the report, once.
        if failure is not None:
            print(f"error: worker {worker_id()} stopped: {failure}", file=sys.stderr)
            return 1
        print(f"worker {worker_id()}: no trial left; the chief writes the report")
        return 0
    rows, table, best = write_report(tuner, output, settings, command)
    print(table, end="")
    if best is not None:
        path = output / "best_config.json"
        print(f"best: trial {rows[0]['trial_id']}, {OBJECTIVE} {rows[0][OBJECTIVE]:.4f}; "
              f"{output / 'trials.md'}; train it with:\n  python -m compgen_tf train --model "
              f"{args.model} {flag} {args.task} --config {path} --seed {args.seed}")
    if failure is not None:
        print(f"error: the search stopped: {failure}", file=sys.stderr)
        return 1
    if best is None:
        print("error: no trial completed", file=sys.stderr)
        return 1
    return 0
