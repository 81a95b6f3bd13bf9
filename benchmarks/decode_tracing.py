"""Greedy decoding of batches of several shapes: traces and seconds, three ways.

    python benchmarks/decode_tracing.py [--model syntactic_attention] [--out FILE]

`translate` and every evaluation call the model's decoding graph once per batch. Three ways
of making that graph are timed:

- `retracing`: a `tf.function(reduce_retracing=True)`, as before 7707b82: traced on the
  first batch's shape, traced again on the next length, then relaxed;
- `signature_autograph`: an input signature of any shape, traced once, with AutoGraph
  converting the decoder's Python, as from 7707b82;
- `signature` (the library's way now, `compgen_tf.models.seq2seq_model.graph_for_any_ids`):
  the same signature, traced without AutoGraph.

Each way runs in a process of its own, because AutoGraph caches what it has converted:
`cold_seconds` is the first model the process decodes with (what a `train`, `evaluate` or
`export` command pays), `warm_seconds` a second, freshly built model in the same process
(what a test worker or a tuning search pays after its first model). Both decode the same
batches, SCAN commands of 1, 2, 4 and 9 words, with models built from one seed (the default
configuration's sizes, SCAN's vocabularies, untrained): every way must give the same ids.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

BATCHES = [["walk"], ["jump twice", "look left"], ["run around right twice"] * 3,
           ["jump around left twice and walk opposite right thrice"] * 4]
WAYS = ("retracing", "signature_autograph", "signature")


def build(model_name: str, split: str):
    import keras

    import tfds_scan
    from compgen_tf import registry
    from compgen_tf.experiments.config import config_path, load_config

    config = load_config(config_path(model_name, split))
    keras.utils.set_random_seed(0)
    # Add-jump's training commands: what a model with `syntax_tying` ties its words from.
    train = [c for c in tfds_scan.all_commands() if c == "jump" or "jump" not in c.split()]
    model = registry.build_model(model_name, config["model_args"],
                                 *registry.scan_vocabularies(), train_commands=train)
    model.build()
    return model


def decoder(model, way: str):
    import tensorflow as tf

    from compgen_tf.models.seq2seq_model import graph_for_any_ids

    if way == "retracing":
        return tf.function(model.greedy_decode, reduce_retracing=True)
    if way == "signature_autograph":
        return tf.function(model.greedy_decode,
                           input_signature=[tf.TensorSpec([None, None], tf.int32)])
    return graph_for_any_ids(model, "greedy_decode", 1)


def timed(model, decode):
    import tensorflow as tf

    ids = [model.encode_commands(tf.constant(batch))[0] for batch in BATCHES]
    started = time.perf_counter()
    outputs = [decode(batch).numpy().tolist() for batch in ids]
    return round(time.perf_counter() - started, 2), outputs


def one_way(model_name: str, split: str, way: str) -> dict:
    """Cold, then warm: two models of one process decoding the batches `way`."""
    result = {}
    for when in ("cold", "warm"):
        model = build(model_name, split)
        decode = decoder(model, way)
        result[f"{when}_seconds"], result["ids"] = timed(model, decode)
        result["traces"] = decode.experimental_get_tracing_count()
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="syntactic_attention")
    parser.add_argument("--split", default="addprim_jump")
    parser.add_argument("--out")
    parser.add_argument("--way", choices=WAYS, help=argparse.SUPPRESS)  # a child process
    args = parser.parse_args(argv)
    if args.way:
        print(json.dumps(one_way(args.model, args.split, args.way)))
        return
    results = {}
    for way in WAYS:
        child = subprocess.run([sys.executable, __file__, "--model", args.model, "--split",
                                args.split, "--way", way], capture_output=True, text=True,
                               check=True)
        results[way] = json.loads(child.stdout.strip().splitlines()[-1])
    ids = [results[way].pop("ids") for way in WAYS]
    assert all(other == ids[0] for other in ids[1:]), "the ways decoded different ids"
    import keras
    import tensorflow as tf

    from benchmark_output import emit

    emit({"benchmark": "decode_tracing",
          "command": "python benchmarks/decode_tracing.py " + shlex.join(argv or sys.argv[1:]),
          "model": args.model,
          "batch_shapes": [[len(b), max(len(c.split()) for c in b)] for b in BATCHES],
          **{f"{way}_{key}": value for way in WAYS for key, value in results[way].items()},
          "machine": f"{platform.machine()}, {os.cpu_count()} cores",
          "tensorflow": tf.__version__, "keras": keras.__version__}, args.out)


if __name__ == "__main__":
    main()
