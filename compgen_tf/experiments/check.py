"""Does a committed seed come back? `python -m compgen_tf reproduce --check FILE --seed N`.

    python -m compgen_tf reproduce --check results/stack_lstm/palindromes_long.json --seed 0

Trains seed N again from the command recorded for it in the results file (the command that
trained that seed, in today's command-line form: `compgen_tf.reproduce`, `toy_runs` and
`meta_training` of earlier versions become `reproduce`), in a run directory of its own
(`--runs-dir`, default `runs/check`), and prints the recorded and the new validation and test
accuracies and training lengths (steps, best step), their differences, the commits of both, and whether the configuration resolved
today equals the one the file recorded (a difference there, or another commit, explains a
drift before the machine does), and the environment variables that change TensorFlow's
kernels. `--out FILE` also writes this as JSON. Exit code 0 when the seed trained, whatever
the difference; 2 when the file or seed cannot be checked or the run directory exists.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path

from compgen_tf.experiments.config import comparable, config_differences
from compgen_tf.experiments.results import load_results, without_options
from compgen_tf.versions import source_commit

# Environment variables that change TensorFlow's kernels, recorded with each check.
ENVIRONMENT = ("TF_ENABLE_ONEDNN_OPTS", "TF_DETERMINISTIC_OPS", "CUDA_VISIBLE_DEVICES")
# Options that say where files go or how many seeds: the check chooses these itself.
_REPLACED = ("--seeds", "--first-seed", "--jobs", "--runs-dir", "--results-dir")


def todays_arguments(command: str, model: str) -> list[str]:
    """The `reproduce` arguments of a recorded command, in today's form."""
    words = shlex.split(command)
    if words[:2] != ["python", "-m"] or len(words) < 3:
        raise ValueError(f"not a recorded python -m command: {command!r}")
    module, rest = words[2], words[3:]
    if module == "compgen_tf" and rest[:1] == ["reproduce"]:
        rest = rest[1:]
    elif module == "compgen_tf.reproduce":
        pass
    elif module == "compgen_tf.train":
        # One seed trained by `train` (then reused by `reproduce`): its model, task and
        # configuration options are `reproduce`'s; the seed and the run directory are the
        # check's own.
        if "--evaluate-splits" in rest or any(w.startswith("--evaluate-splits=") for w in rest):
            raise ValueError(f"a run scored on chosen splits only cannot be checked: {command!r}")
        rest = without_options(rest, ("--seed", "--output", "--strategy", "--cpu-devices"))
        rest = [w for w in rest if w != "--verbose"]
    elif module == "compgen_tf.meta_training":
        rest = ["--model", "meta_seq2seq", *rest]
    elif module == "compgen_tf.toy_runs":
        task = rest[rest.index("--task") + 1]
        if "--variant" in rest:  # toy_runs --variant V named its runs TASK_V
            index = rest.index("--variant")
            rest = [*rest[:index], "--name", f"{task}_{rest[index + 1]}", *rest[index + 2:]]
    else:
        raise ValueError(f"{module} is not a command that trains seeds of {model}: "
                         f"{command!r}")
    return without_options(rest, _REPLACED)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m compgen_tf reproduce --check",
                                     description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", required=True, metavar="RESULTS_FILE")
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--runs-dir", default="runs/check")
    parser.add_argument("--out", help="also write the comparison as JSON")
    args = parser.parse_args(argv)
    try:
        document = load_results(args.check)
        (run,) = [r for r in document["runs"] if r["seed"] == args.seed] or [None]
        if run is None:
            raise ValueError(f"{args.check} has no seed {args.seed}; it has "
                             f"{[r['seed'] for r in document['runs']]}")
        recorded_command = run.get("command", document["command"])
        arguments = todays_arguments(recorded_command, document["model"])
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2

    from compgen_tf import registry
    from compgen_tf.experiments import reproduce

    arguments += ["--first-seed", str(args.seed), "--seeds", "1", "--runs-dir", args.runs_dir,
                  "--no-results"] + ([] if "--quiet" in arguments else ["--quiet"])
    parsed = reproduce.build_parser().parse_args(arguments)
    run_dir = Path(args.runs_dir) / parsed.model / (parsed.name or parsed.task) / \
        f"seed{args.seed}"
    if run_dir.exists():
        # `reproduce` would reuse it: the check must train, not read an earlier check.
        print(f"error: {run_dir} exists; give the check another --runs-dir", file=sys.stderr)
        return 2
    print(f"re-running seed {args.seed}: python -m compgen_tf reproduce "
          f"{shlex.join(arguments)}", flush=True)
    code = reproduce.main(arguments)
    if code != 0:
        return code
    metrics = json.loads((run_dir / "metrics.json").read_text())
    config = json.loads((run_dir / "config.json").read_text())
    # The toy files hold one test split each: the one this file records.
    experiment = registry.spec(parsed.model).experiment
    test_part = _test_part(experiment, config, parsed.name or parsed.task,
                           Path(args.check).stem)
    if test_part is None:
        print(f"error: cannot tell which of the run's test splits "
              f"{list(experiment.test_parts(config))} {args.check} records", file=sys.stderr)
        return 2
    new = {"val_accuracy": metrics["accuracy"]["validation"],
           "test_accuracy": metrics["accuracy"][test_part],
           "steps": metrics["steps"], "best_step": metrics.get("best_step")}
    recorded_config = document.get("config")
    changed = (config_differences(comparable(experiment.recorded_config(recorded_config)),
                                  comparable(experiment.recorded_config(config)))
               if recorded_config else ["(the file records no configuration)"])
    report = {
        "results_file": str(args.check), "seed": args.seed,
        "recorded_command": recorded_command,
        "command": "python -m compgen_tf reproduce " + shlex.join(arguments),
        "recorded": {key: run.get(key) for key in new},
        "new": new,
        "difference": {key: new[key] - run[key] for key in new
                       if run.get(key) is not None and new[key] is not None},
        "recorded_commit": run.get("commit") or document.get("versions", {}).get("commit"),
        "commit": source_commit(),
        "configuration_changes": [line for line in changed
                                  if not line.startswith(("seed:", "model:", "split:",
                                                          "task:"))],
        "wall_time_s": metrics["wall_time_s"],
        # Settings outside the configuration that change which kernels run.
        "environment": {key: os.environ[key] for key in ENVIRONMENT if key in os.environ},
    }
    for key in new:
        before = report["recorded"][key]
        print(f"{key}: recorded {before!r}, now {new[key]!r}"
              + (f", difference {new[key] - before:+.6f}"
                 if None not in (before, new[key]) else ""))
    print(f"commit: recorded {report['recorded_commit']}, now {report['commit']}")
    print("configuration: " + ("unchanged" if not report["configuration_changes"] else
                               "; ".join(report["configuration_changes"])))
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return 0


def _test_part(experiment, config: dict, name: str, file_name: str) -> str | None:
    """Which of the run's test accuracies the results file `file_name` records: the only
    one, or the one whose results name begins the file's name (a file renamed with a suffix,
    e.g. `palindromes_long_lr0.01_early_stop`); None when that is not clear."""
    parts = experiment.test_parts(config)
    if len(parts) == 1:
        return parts[0]
    names = experiment.results_names(config, name)
    matches = [(len(results_name), part) for results_name, part in zip(names, parts)
               if file_name == results_name or file_name.startswith(results_name + "_")]
    return max(matches)[1] if matches else None
