"""Greedy decoding of batches of several shapes: traces and seconds, the old way and the new.

    python benchmarks/decode_tracing.py [--model syntactic_attention] [--out FILE]

`translate` and every evaluation call the model's decoding graph once per batch. It used to be
a `tf.function(reduce_retracing=True)`: traced on the first batch's shape, traced again on the
next length, then relaxed. Now it has an input signature of any shape
(`compgen_tf.models.seq2seq_model.graph_for_any_ids`) and is traced once. Both are timed
(`old_*`: `reduce_retracing`, `new_*`: the signature) here in one process, after an untimed
warm-up, on one freshly built model each (the default configuration's sizes, SCAN's
vocabularies, untrained), over the same batches: SCAN commands of 1, 2, 4 and 9 words.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmark_output import emit  # noqa: E402
from compgen_tf import registry  # noqa: E402
from compgen_tf.experiments.config import config_path, load_config  # noqa: E402
from compgen_tf.models.seq2seq_model import graph_for_any_ids  # noqa: E402
import tfds_scan  # noqa: E402

BATCHES = [["walk"], ["jump twice", "look left"], ["run around right twice"] * 3,
           ["jump around left twice and walk opposite right thrice"] * 4]


def build(model_name: str, split: str):
    config = load_config(config_path(model_name, split))
    keras.utils.set_random_seed(0)
    # Add-jump's training commands: what a model with `syntax_tying` ties its words from.
    train = [c for c in tfds_scan.all_commands() if c == "jump" or "jump" not in c.split()]
    model = registry.build_model(model_name, config["model_args"],
                                 *registry.scan_vocabularies(), train_commands=train)
    model.build()
    return model


def timed(model, decode):
    ids = [model.encode_commands(tf.constant(batch))[0] for batch in BATCHES]
    started = time.perf_counter()
    outputs = [decode(batch).numpy() for batch in ids]
    return time.perf_counter() - started, outputs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="syntactic_attention")
    parser.add_argument("--split", default="addprim_jump")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    # A first trace in the process pays one-time costs: spent on a third model, untimed.
    warm = build(args.model, args.split)
    timed(warm, graph_for_any_ids(warm, "greedy_decode", 1))
    old_model, new_model = build(args.model, args.split), build(args.model, args.split)
    old = tf.function(old_model.greedy_decode, reduce_retracing=True)
    old_s, old_out = timed(old_model, old)
    new = graph_for_any_ids(new_model, "greedy_decode", 1)
    new_s, new_out = timed(new_model, new)
    # The two models are built from one seed: the same weights, so the same ids.
    assert all((a == b).all() for a, b in zip(old_out, new_out))
    emit({"benchmark": "decode_tracing",
          "command": "python benchmarks/decode_tracing.py " + shlex.join(argv or sys.argv[1:]),
          "model": args.model,
          "batch_shapes": [[len(b), max(len(c.split()) for c in b)] for b in BATCHES],
          "old_traces": old.experimental_get_tracing_count(), "old_seconds": round(old_s, 2),
          "new_traces": new.experimental_get_tracing_count(), "new_seconds": round(new_s, 2),
          "machine": f"{platform.machine()}, {os.cpu_count()} cores",
          "tensorflow": tf.__version__, "keras": keras.__version__}, args.out)


if __name__ == "__main__":
    main()
