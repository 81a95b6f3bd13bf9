"""Meta-training speed of meta seq2seq (one episode per step) on this machine.

    python benchmarks/meta_seq2seq_speed.py [--task add_jump_permutation] [--steps 30]
                                            [--intra-op-threads N] [--inter-op-threads N]
                                            [--out results/benchmarks/meta_seq2seq_speed.json]

Runs the model's own `train_step` (what `fit` runs) on the task's first training episodes
(the same episodes, in the same order, as seed 0 of a real run) and prints one
JSON line: seconds per episode step (median over repeats) and episode
generation + encoding time. Thread options let two runs share the CPU; run it on
an idle machine, or start two at once to measure exactly that.
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="add_jump_permutation")
    parser.add_argument("--steps", type=int, default=30, help="train steps per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--intra-op-threads", type=int, default=0, help="0: TensorFlow's choice")
    parser.add_argument("--inter-op-threads", type=int, default=0, help="0: TensorFlow's choice")
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)

    import keras
    import tensorflow as tf

    # 0 leaves TensorFlow's choice, which TF_NUM_INTRAOP_THREADS / TF_NUM_INTEROP_THREADS set.
    if args.intra_op_threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.intra_op_threads)
    if args.inter_op_threads:
        tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
    from benchmark_output import emit
    from library import module

    config_path = module("compgen_tf.experiments.config").config_path
    load_config = module("compgen_tf.experiments.config").load_config
    episodes = module("compgen_tf.experiments.episodes")
    MODEL_NAME, episode_batch = episodes.MODEL_NAME, episodes.episode_batch
    # (the episodes' own builder before the experiments' one run, the registry's since)
    build_model = getattr(episodes, "build_model", None) or module(
        "compgen_tf.registry").build_meta_model
    from compgen_tf.versions import package_versions
    from tfds_scan import episodes

    config = load_config(config_path(MODEL_NAME, args.task))
    keras.utils.set_random_seed(0)
    model = build_model(args.task, config["model_args"])
    started = time.perf_counter()
    count = args.steps * args.repeats + 1
    batches = [episode_batch(model, episodes.training_episode(args.task, 0, index),
                             model.support_loss) for index in range(count)]
    prepare_s = (time.perf_counter() - started) / count
    training = config["training"]
    model.compile(optimizer=keras.optimizers.Adam(training.get("learning_rate", 1e-3)),
                  clip_norm=training.get("clip_norm", 50.0))
    ids = tf.TensorSpec([None, None], tf.int32)
    # The model's own train_step (what `fit` runs), one episode per step.
    step = tf.function(lambda *batch: model.train_step(batch), input_signature=[ids] * 4)
    step(*batches[0])  # trace
    seconds = []
    for repeat in range(args.repeats):
        chunk = batches[1 + repeat * args.steps: 1 + (repeat + 1) * args.steps]
        start = time.perf_counter()
        for batch in chunk:
            step(*batch)
        seconds.append((time.perf_counter() - start) / args.steps)
    result = {"benchmark": "meta_seq2seq_speed",
              "command": "python benchmarks/meta_seq2seq_speed.py " + shlex.join(argv),
              "task": args.task, "model_args": config["model_args"],
              "intra_op_threads": args.intra_op_threads,
              "inter_op_threads": args.inter_op_threads, "cpu_count": os.cpu_count(),
              "seconds_per_step": round(statistics.median(seconds), 4),
              "seconds_per_step_repeats": [round(s, 4) for s in seconds],
              "episode_preparation_s": round(prepare_s, 5),
              "versions": package_versions()}
    emit(result, args.out)


if __name__ == "__main__":
    main()
