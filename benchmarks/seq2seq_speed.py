"""Training and greedy-decoding speed of the baseline seq2seq on this machine.

    python benchmarks/seq2seq_speed.py [--model seq2seq] [--split simple] [--batch-size 32]
                                       [--out results/benchmarks/seq2seq_simple.json]

Times the model's own `train_step` (what `fit` runs; with and without XLA) on fixed padded
shapes, and greedy decoding of the validation commands, and prints one JSON
line. Run it on an idle machine: other CPU jobs halve these figures.
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

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmark_output import emit  # noqa: E402
from compgen_tf import registry  # noqa: E402
from library import module  # noqa: E402

config_path = module("compgen_tf.experiments.config").config_path
load_config = module("compgen_tf.experiments.config").load_config
encode_split = module("compgen_tf.training.data").encode_split
split_examples = module("compgen_tf.experiments.scan").split_examples
from compgen_tf.versions import package_versions  # noqa: E402
from compgen_tf.models.preprocessor import vocabulary_words  # noqa: E402


def median_rate(fn, items_per_call, repeats, calls):
    fn()  # trace / compile
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        rates.append(items_per_call * calls / (time.perf_counter() - start))
    return round(statistics.median(rates), 1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="seq2seq", choices=sorted(registry.SCAN_MODELS))
    parser.add_argument("--split", default="simple")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--decode-batch-size", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20, help="train steps per repeat")
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)

    config = load_config(config_path(args.model, args.split))
    keras.utils.set_random_seed(0)
    train = split_examples(args.split, "train", config["data"])
    source = vocabulary_words(c for c, _ in train)
    target = vocabulary_words(a for _, a in train)
    result = {"benchmark": "seq2seq_speed",
              "command": "python benchmarks/seq2seq_speed.py " + shlex.join(argv),
              "model": args.model, "split": args.split,
              "batch_size": args.batch_size, "model_args": config["model_args"],
              "cpu_count": os.cpu_count(), "versions": package_versions()}
    rng = np.random.default_rng(0)
    for jit in (False, True):
        model = registry.build_model(args.model, config["model_args"], source, target)
        fit = encode_split(model, train)
        batch = rng.choice(len(fit), args.batch_size, replace=False)
        # Fixed padded shapes: the longest command and action sequence of the split.
        source_ids = tf.constant(fit.source_ids[batch])
        target_ids = tf.constant(fit.target_ids[batch])
        training = config["training"]
        model.compile(optimizer=keras.optimizers.Adam(training.get("learning_rate", 1e-3)),
                      clip_norm=training.get("clip_norm"),
                      teacher_forcing_ratio=training.get("teacher_forcing_ratio", 1.0))
        # The model's own train_step (what `fit` runs), compiled as `fit` would compile it.
        step = tf.function(lambda s, t: model.train_step((s, t)), jit_compile=jit)
        rate = median_rate(lambda: step(source_ids, target_ids), args.batch_size,
                           args.repeats, args.steps)
        result[f"train_examples_per_s_{'xla' if jit else 'no_xla'}"] = rate

    model = registry.build_model(args.model, config["model_args"], source, target)
    commands = tf.constant(fit.source_ids[:args.decode_batch_size])
    for jit in (False, True):
        decode = tf.function(model.greedy_decode, jit_compile=jit)
        result[f"decode_commands_per_s_{'xla' if jit else 'no_xla'}"] = median_rate(
            lambda: decode(commands), args.decode_batch_size, args.repeats, 2)
    emit(result, args.out)


if __name__ == "__main__":
    main()
