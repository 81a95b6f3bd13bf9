"""Does a committed seed come back? `python -m compgen_tf reproduce --check FILE --seed N`.

    python -m compgen_tf reproduce --check results/stack_lstm/palindromes_long.json --seed 0

`check_seed` trains seed N again from the command recorded for it in the results file (the
command that trained that seed, in today's command-line form: `compgen_tf.reproduce`,
`toy_runs` and `meta_training` of earlier versions become `reproduce`, `todays_arguments`),
in a run directory of its own, and returns the recorded and the new validation and test
accuracies and training lengths (steps, best step), their differences, the commits of both,
and whether the configuration resolved today equals the one the file recorded (a difference
there, or another commit, explains a drift before the machine does), and the environment
variables that change TensorFlow's kernels, and whether the new test accuracy lands in
band (`band_verdict`: within the [min, max] of the test accuracies of all the file's
seeds, ends included; a file of one seed has a band of one value, which only that value
meets). The command line (`compgen_tf.cli.reproduce`)
reads the recorded arguments into a `Reproduction`, prints the comparison and writes it
with `--out`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
from pathlib import Path

from compgen_tf.experiments.config import comparable, config_differences
from compgen_tf.experiments.kinds import experiment_for
from compgen_tf.experiments.reproduce import Reproduction, reproduce
from compgen_tf.experiments.results import load_results, without_options
from compgen_tf.experiments.staleness import recorded_commit
from compgen_tf.versions import source_commit

# Environment variables that change TensorFlow's kernels, recorded with each check.
ENVIRONMENT = ("TF_ENABLE_ONEDNN_OPTS", "TF_DETERMINISTIC_OPS", "CUDA_VISIBLE_DEVICES")
# Options that say where files go or how many seeds: the check chooses these itself. A seed
# continued from a shorter run (`--continue-from`) trains as the straight longer run would,
# so the check trains it straight through, in its own runs directory.
_REPLACED = ("--seeds", "--first-seed", "--jobs", "--runs-dir", "--results-dir",
             "--continue-from")


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


def _print(line: str) -> None:
    print(line, flush=True)


@dataclasses.dataclass(frozen=True)
class RecordedSeed:
    """One seed of a results file, as `recorded_seed` reads it.

    Attributes:
        results_file: the file.
        seed: the seed.
        document: the file's contents.
        run: the seed's record.
        command: the command recorded for the seed.
        arguments: its `reproduce` arguments in today's form, less the options that say
            where files go and how many seeds (the check chooses those itself).
    """

    results_file: str
    seed: int
    document: dict
    run: dict
    command: str
    arguments: list


def recorded_seed(results_file, seed: int) -> RecordedSeed:
    """Seed `seed` of `results_file`; an OSError or ValueError says why it cannot be checked."""
    document = load_results(results_file)
    (run,) = [r for r in document["runs"] if r["seed"] == seed] or [None]
    if run is None:
        raise ValueError(f"{results_file} has no seed {seed}; it has "
                         f"{[r['seed'] for r in document['runs']]}")
    command = run.get("command", document["command"])
    return RecordedSeed(str(results_file), seed, document, run, command,
                        todays_arguments(command, document["model"]))


def check_seed(recorded: RecordedSeed, reproduction: Reproduction, command: str,
               echo=_print) -> dict:
    """Trains `recorded`'s seed again as `reproduction` says (one seed, no results written;
    `command` is how it is shown and reported) and returns the comparison.

    Raises a `ValueError` when the run directory exists already (the check must train, not
    read an earlier check) or the run's test split recorded by the file is not clear, and
    what `reproduce` raises.
    """
    seed = recorded.seed
    run_dir = reproduction.run_dir(seed)
    if run_dir.exists():
        raise ValueError(f"{run_dir} exists; give the check another --runs-dir")
    echo(f"re-running seed {seed}: {command}")
    reproduce(reproduction, echo)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    # The toy files hold one test split each: the one this file records.
    experiment = experiment_for(reproduction.model)
    config = experiment.recorded_run_config(run_dir)
    test_part = _test_part(experiment, config, reproduction.run_name,
                           Path(recorded.results_file).stem)
    if test_part is None:
        raise ValueError(f"cannot tell which of the run's test splits "
                         f"{list(experiment.test_parts(config))} {recorded.results_file} "
                         f"records")
    run, document = recorded.run, recorded.document
    new = {"val_accuracy": metrics["accuracy"]["validation"],
           "test_accuracy": metrics["accuracy"][test_part],
           "steps": metrics["steps"], "best_step": metrics.get("best_step")}
    recorded_config = document.get("config")
    changed = (config_differences(comparable(experiment.recorded_config(recorded_config)),
                                  comparable(experiment.recorded_config(config.to_json())))
               if recorded_config else ["(the file records no configuration)"])
    return {
        "results_file": recorded.results_file, "seed": seed,
        # A check chooses nothing; the setting it trains is the results file's, and so is
        # how that setting was chosen.
        "provenance": {"kind": "check", "configuration": document.get("provenance")},
        "recorded_command": recorded.command,
        "command": command,
        "recorded": {key: run.get(key) for key in new},
        "new": new,
        "difference": {key: new[key] - run[key] for key in new
                       if run.get(key) is not None and new[key] is not None},
        "recorded_commit": recorded_commit(document, run),
        "commit": source_commit(),
        "configuration_changes": [line for line in changed
                                  if not line.startswith(("seed:", "model:", "split:",
                                                          "task:"))],
        "wall_time_s": metrics["wall_time_s"],
        # The Keras backend the seed trained on now; the recorded one is the run's.
        "backend": metrics.get("backend", "tensorflow"),
        "recorded_backend": run.get("backend", "tensorflow"),
        **band_verdict(document, new["test_accuracy"]),
        # Settings outside the configuration that change which kernels run.
        "environment": {key: os.environ[key] for key in ENVIRONMENT if key in os.environ},
    }


def band_verdict(document: dict, test_accuracy: float) -> dict:
    """Whether a test accuracy trained again lands in band: within the [min, max] of the
    test accuracies of all the seeds of the results file `document`, ends included.

    A seed trained again on other code or another machine takes another path through
    training (docs/research/reproducibility.md); landing inside the spread of the file's
    own seeds says the file still describes what the code trains. A file of one seed has
    a band of that one value.

    Args:
        document: the results file's contents.
        test_accuracy: the new test accuracy (a fraction).

    Returns:
        `{"band": [min, max], "band_seeds": n, "in_band": bool}`.
    """
    accuracies = [run["test_accuracy"] for run in document["runs"]]
    low, high = min(accuracies), max(accuracies)
    return {"band": [low, high], "band_seeds": len(accuracies),
            "in_band": bool(low <= test_accuracy <= high)}


def report_lines(report: dict) -> list[str]:
    """The comparison of `check_seed` as the command prints it."""
    lines = []
    for key, now in report["new"].items():
        before = report["recorded"][key]
        lines.append(f"{key}: recorded {before!r}, now {now!r}"
                     + (f", difference {now - before:+.6f}" if None not in (before, now)
                        else ""))
    lines.append(f"commit: recorded {report['recorded_commit']}, now {report['commit']}")
    lines.append(f"backend: recorded {report.get('recorded_backend', 'tensorflow')}, now "
                 f"{report.get('backend', 'tensorflow')}")
    lines.append("configuration: " + ("unchanged" if not report["configuration_changes"] else
                                      "; ".join(report["configuration_changes"])))
    low, high = report["band"]
    lines.append(f"in band: {'yes' if report['in_band'] else 'no'} (test accuracy "
                 f"{report['new']['test_accuracy']!r}; the file's {report['band_seeds']} "
                 f"seeds span {low!r} to {high!r})")
    return lines


def _test_part(experiment, config, name: str, file_name: str) -> str | None:
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
