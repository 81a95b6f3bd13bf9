"""Meta seq2seq's training on JAX with its episodes' widths as they come and padded to
multiples of 8 (`EpisodeBatches.width_multiple`), in one process.

    KERAS_BACKEND=jax python benchmarks/meta_seq2seq_jax_widths.py [--task add_jump_permutation]
        [--steps 60] [--multiples 1,8] [--out results/benchmarks/meta_seq2seq_jax_widths.json]

For each multiple: the task's configured model from the same seed, compiled as a run compiles
it (jitted), `fit` over training episodes 0 .. steps-1 of seed 0, one episode a step. Records
the wall time of the fit, how many times XLA compiled something and for how long
(`jax.monitoring`'s backend-compile events), the number of distinct batch shapes, and the
mean loss over the steps (padding is masked: the losses agree up to rounding).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="add_jump_permutation")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--multiples", default="1,8")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)

    import jax
    import keras
    import numpy as np

    if keras.backend.backend() != "jax":
        print("error: run it with KERAS_BACKEND=jax", file=sys.stderr)
        return 2
    from benchmark_output import emit

    from compgen_tf import registry
    from compgen_tf.experiments.config import config_path, load_config
    from compgen_tf.experiments.episodes import EpisodeBatches
    from compgen_tf.training.batches import training_dataset
    from compgen_tf.versions import package_versions

    compiles = []
    jax.monitoring.register_event_duration_secs_listener(
        lambda event, seconds, **_: compiles.append(seconds) if event == COMPILE_EVENT else None)
    config = load_config(config_path("meta_seq2seq", args.task))
    training = config["training"]
    result = {"benchmark": "meta_seq2seq_jax_widths",
              "command": "KERAS_BACKEND=jax python benchmarks/meta_seq2seq_jax_widths.py "
                         + shlex.join(argv),
              "task": args.task, "model_args": config["model_args"], "steps": args.steps,
              "cpu_count": os.cpu_count(), "runs": []}
    for multiple in (int(m) for m in args.multiples.split(",")):
        keras.utils.set_random_seed(0)
        model = registry.build_meta_model(args.task, config["model_args"])
        model.compile(optimizer=keras.optimizers.Adam(training.get("learning_rate", 1e-3)),
                      clip_norm=training.get("clip_norm", 50.0), jit_compile=True)
        stream = EpisodeBatches(model, args.task, seed=0)
        stream.width_multiple = multiple
        shapes = {tuple(x.shape for x in stream.batch(step)) for step in range(args.steps)}
        compiles.clear()
        started = time.perf_counter()
        history = model.fit(training_dataset(stream, 0), steps_per_epoch=1,
                            epochs=args.steps, verbose=0)
        wall = time.perf_counter() - started
        result["runs"].append({
            "width_multiple": multiple, "batch_shapes": len(shapes),
            "fit_wall_s": round(wall, 1), "compilations": len(compiles),
            "compile_s": round(sum(compiles), 1),
            "s_per_step_outside_compilation": round((wall - sum(compiles)) / args.steps, 4),
            "mean_loss": float(np.mean(history.history["loss"]))})
        print(result["runs"][-1], flush=True)
    result["versions"] = package_versions()
    emit(result, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
