"""Training speed of every family through the library's own training entry points.

    python benchmarks/training_speed.py [--families seq2seq,meta_seq2seq,...] [--steps N]
                                        [--out results/benchmarks/training_speed.json]

For each family it trains one short run from scratch with the committed configuration
(the experiment's one run, `SCAN.train`, `EPISODES.train` and `TOY.train`, on a `RunConfig`;
before it the run functions `experiments.scan.train_run`, `experiments.episodes.train_meta_run`
and `experiments.toy.train_toy_run`, and before 0.2.0 in `runs`, `meta_training` and `toy_runs`,
see `library.py`), one validation at the very end and no test
evaluation, and reports the run's own `wall_time_s` (training time, first-step tracing
included, validation excluded) and training examples (or episodes) per second. These entry
points exist on every version since the configuration bases, so `compare_commits.py` can
time old and new training paths in one run. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmark_output import emit  # noqa: E402
from library import module  # noqa: E402
from compgen_tf.versions import package_versions  # noqa: E402

# family -> (model, split or task, training steps, kind)
FAMILIES = {
    "seq2seq": ("seq2seq", "simple", 200, "scan"),
    "equivariant_seq2seq": ("equivariant_seq2seq", "addprim_jump", 60, "scan"),
    "syntactic_attention": ("syntactic_attention", "addprim_jump", 200, "scan"),
    "meta_seq2seq": ("meta_seq2seq", "mutual_exclusivity", 80, "meta"),
    "symbol_convolution": ("symbol_convolution", "composition", 300, "toy"),
    "stack_lstm": ("stack_lstm", "palindromes", 40, "toy"),
}


def train_once(family: str, steps: int, run_dir: Path, config_file: str | None = None) -> dict:
    """Trains `family` for `steps` steps in `run_dir` from its committed configuration, or from
    `config_file` (a SCAN family only), and returns its training time."""
    config_module = module("compgen_tf.experiments.config")
    apply_overrides, config_path, load_config = (config_module.apply_overrides,
                                                 config_module.config_path,
                                                 config_module.load_config)
    model, split, _, kind = FAMILIES[family]
    if config_file and kind != "scan":
        raise ValueError(f"a configuration file can be given for a SCAN family only, not {family}")
    short = [f"training.max_steps={steps}", f"training.eval_every={steps}",
             f"training.checkpoint_every={steps}"]
    if kind == "scan":
        scan = module("compgen_tf.experiments.scan")

        config = apply_overrides(load_config(config_file or config_path(model, split)),
                                 short + ["data.validation_fraction=0.02"])
        config.update(model=model, split=split)
        if hasattr(scan, "train_run"):  # before the experiments' one run
            metrics = scan.train_run(config, run_dir, seed=0, verbose=0, evaluate_splits=())
        else:
            metrics = scan.SCAN.train(scan.SCAN.run_config(config), run_dir, seed=0, verbose=0,
                                      evaluate_splits=())
        examples = steps * config["training"].get("batch_size", 64)
    elif kind == "meta":
        meta_training = module("compgen_tf.experiments.episodes")

        overrides = short + ["data.validation_episodes=1"]
        if hasattr(meta_training, "EPISODES"):  # 0.2.0
            config = meta_training.EPISODES.resolve_config(model, split, overrides=overrides)
        else:
            config = meta_training.resolve_config(split, overrides=overrides)
        if hasattr(meta_training, "train_meta_run"):  # before the experiments' one run
            metrics = meta_training.train_meta_run(config, run_dir, seed=0, verbose=0)
        else:
            metrics = meta_training.EPISODES.train(config, run_dir, seed=0, verbose=0)
        examples = steps  # episodes
    else:
        toy_runs = module("compgen_tf.experiments.toy")

        config = apply_overrides(load_config(config_path(model, split)), short)
        config.update(model=model, task=split)
        if hasattr(toy_runs, "train_toy_run"):  # before the experiments' one run
            metrics = toy_runs.train_toy_run(config, run_dir, seed=0, verbose=0)
        else:
            metrics = toy_runs.TOY.train(toy_runs.TOY.run_config(config), run_dir, seed=0,
                                         verbose=0)
        examples = None
    result = {"wall_time_s": metrics["wall_time_s"], "steps": metrics.get("steps", steps)}
    if examples is not None:
        result["examples_per_s"] = round(examples / max(metrics["wall_time_s"], 1e-9), 1)
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--families", default=",".join(FAMILIES),
                        help=f"comma-separated, from {', '.join(FAMILIES)}")
    parser.add_argument("--steps", type=int, help="training steps (default: per family)")
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    families = args.families.split(",")
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown families {unknown}; choose from {sorted(FAMILIES)}")
    result = {"benchmark": "training_speed",
              "command": "python benchmarks/training_speed.py " + shlex.join(argv),
              "cpu_count": os.cpu_count(), "versions": package_versions()}
    with tempfile.TemporaryDirectory() as folder:
        for family in families:
            steps = args.steps or FAMILIES[family][2]
            timing = train_once(family, steps, Path(folder) / family)
            result.update({f"{family}_{key}": value for key, value in timing.items()})
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
