"""Every family's network trained with plain `keras.Model.fit` on any Keras backend: step time.

    KERAS_BACKEND=jax python benchmarks/backbone_fit_step.py [--families a,b] [--batch 32]
                                                               [--steps 20] [--out FILE]

The backbones and the toy-task models use `keras.ops` only, so they train under
TensorFlow, JAX or PyTorch, on a CPU or a GPU, without the library's TensorFlow parts
(this script imports neither the task models nor TensorFlow). Each family is built at its
committed configuration's sizes (`configs/<model>/...json`, `model_args`) with SCAN's
vocabularies, compiled with Adam and a cross-entropy that ignores padding, and fitted on one
fixed batch of random ids: one epoch of `--warmup` steps (tracing and compilation), then one
timed epoch of `--steps` steps. It reports the mean step time of the timed epoch (`fit`
returns only after the last step has finished, so asynchronous backends are timed
to completion) and the loss (dropout off) on that batch before and after: it must fall on a
batch the model sees at every step, so a family whose gradients do not flow shows here.

The meta seq2seq backbone reads a support set whose batch axis is not the queries' (one
episode per step), so it is fitted from a generator that yields whole episodes.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from benchmark_output import emit  # noqa: E402

# SCAN's vocabularies with the library's special tokens (<pad>, <unk>, <sos>, <eos>).
SPECIALS = ["<pad>", "<unk>", "<sos>", "<eos>"]
SCAN_WORDS = ["after", "and", "around", "jump", "left", "look", "opposite", "right", "run",
              "thrice", "turn", "twice", "walk"]
SCAN_ACTIONS = ["I_JUMP", "I_LOOK", "I_RUN", "I_TURN_LEFT", "I_TURN_RIGHT", "I_WALK"]
SOURCE_LENGTH, TARGET_LENGTH = 11, 24  # <sos> 9 words <eos>; a 24-action output
FAMILIES = ("seq2seq", "syntactic_attention", "equivariant_seq2seq", "meta_seq2seq",
            "symbol_convolution", "stack_lstm")
CONFIGS = {"seq2seq": "seq2seq/simple.json",
           "syntactic_attention": "syntactic_attention/default.json",
           "equivariant_seq2seq": "equivariant_seq2seq/default.json",
           "meta_seq2seq": "meta_seq2seq/add_jump_permutation.json",
           "symbol_convolution": "symbol_convolution/composition.json",
           "stack_lstm": "stack_lstm/palindromes.json"}


def model_args(family: str) -> dict:
    """The committed configuration's `model_args`, following `"base"` links."""
    path = ROOT / "configs" / CONFIGS[family]
    config = json.loads(path.read_text())
    args = {}
    if "base" in config:
        args.update(json.loads((path.parent / config["base"]).read_text()).get("model_args", {}))
    args.update(config.get("model_args", {}))
    return args


def accepted(constructor, args: dict) -> dict:
    """The entries of `args` that `constructor` takes by name."""
    names = inspect.signature(constructor).parameters
    return {key: value for key, value in args.items() if key in names}


def build(family: str):
    """(model, batches): the family's network and a function giving (inputs, labels)."""
    from compgen_tf import models
    from compgen_tf.groups import Symmetry
    from compgen_tf.models.symmetry.composition import build_composition_model
    from compgen_tf.models.symmetry.palindromes import build_palindrome_model

    args = model_args(family)
    source_size, target_size = len(SPECIALS) + len(SCAN_WORDS), len(SPECIALS) + len(SCAN_ACTIONS)
    rng = np.random.default_rng(0)

    def ids(rows, length, size):
        return rng.integers(len(SPECIALS), size, (rows, length)).astype("int32")

    if family == "symbol_convolution":
        model = build_composition_model("convolution", **accepted(build_composition_model, args))
        return model, (ids(32, 2, 20), rng.integers(0, 11, (32, 11)).astype("int32"))
    if family == "stack_lstm":
        model = build_palindrome_model("stack", **accepted(build_palindrome_model, args))
        return model, (ids(32, 24, 6), ids(32, 24, 6))
    if family == "meta_seq2seq":
        vocabulary = len(SPECIALS) + len(SCAN_WORDS) + len(SCAN_ACTIONS)
        model = models.MetaSeq2SeqBackbone(vocabulary, vocabulary,
                                           **accepted(models.MetaSeq2SeqBackbone, args))
        episode = {"support_command_ids": ids(100, SOURCE_LENGTH, vocabulary),
                   "support_action_ids": ids(100, TARGET_LENGTH, vocabulary),
                   "source_ids": ids(32, SOURCE_LENGTH, vocabulary),
                   "target_ids": ids(32, TARGET_LENGTH, vocabulary)}
        return model, (episode, ids(32, TARGET_LENGTH, vocabulary))
    if family == "equivariant_seq2seq":
        symmetry = Symmetry.for_scan(args.pop("symmetry"))
        model = models.EquivariantSeq2SeqBackbone(
            symmetry.get_config(), SPECIALS + SCAN_WORDS, SPECIALS + SCAN_ACTIONS,
            **accepted(models.EquivariantSeq2SeqBackbone, args))
    else:
        backbone = {"seq2seq": models.AttentionSeq2SeqBackbone,
                    "syntactic_attention": models.SyntacticAttentionBackbone}[family]
        model = backbone(source_size, target_size, **accepted(backbone, args))
    inputs = {"source_ids": ids(32, SOURCE_LENGTH, source_size),
              "target_ids": ids(32, TARGET_LENGTH, target_size)}
    return model, (inputs, ids(32, TARGET_LENGTH, target_size))


def batch_of(data, batch: int):
    """`data` cut or tiled to `batch` rows (the meta support set stays as it is)."""
    inputs, labels = data

    def rows(array):
        return np.resize(array, (batch,) + array.shape[1:])

    if isinstance(inputs, dict):
        inputs = {k: v if k.startswith("support") else rows(v) for k, v in inputs.items()}
    else:
        inputs = rows(inputs)
    return inputs, rows(labels)


def time_family(family: str, batch: int, warmup: int, steps: int) -> dict:
    keras.utils.set_random_seed(0)
    model, data = build(family)
    inputs, labels = batch_of(data, batch)
    if family not in ("symbol_convolution", "stack_lstm"):  # those come compiled
        model.compile(optimizer=keras.optimizers.Adam(1e-3, global_clipnorm=5.0),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                      ignore_class=0))

    def episodes():
        while True:
            yield inputs, labels

    def fit(count):
        if family == "meta_seq2seq":  # one episode per step: support and queries differ in rows
            return model.fit(episodes(), steps_per_epoch=count, epochs=1, verbose=0)
        repeated = (({k: np.concatenate([v] * count) for k, v in inputs.items()}
                     if isinstance(inputs, dict) else np.concatenate([inputs] * count)),
                    np.concatenate([labels] * count))
        return model.fit(*repeated, batch_size=batch, epochs=1, shuffle=False, verbose=0)

    def loss():  # without dropout, on the batch every step trains on
        if family == "meta_seq2seq":
            result = model.evaluate(episodes(), steps=1, verbose=0)
        else:
            result = model.evaluate(inputs, labels, batch_size=batch, verbose=0)
        return float(result[0] if isinstance(result, list) else result)  # [loss, metrics...]

    first = loss()
    fit(warmup)
    start = time.perf_counter()
    fit(steps)
    elapsed = time.perf_counter() - start
    last = loss()
    return {"family": family, "parameters": int(model.count_params()), "batch": batch,
            "timed_steps": steps, "step_ms": round(1000 * elapsed / steps, 2),
            "loss_before": round(first, 4),
            "loss_after": round(last, 4), "loss_fell": bool(last < first)}


def device_name() -> str:
    backend = keras.backend.backend()
    if backend == "jax":
        import jax
        return str(jax.devices()[0])
    if backend == "torch":
        import torch
        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu"
    import tensorflow as tf
    return ",".join(d.device_type for d in tf.config.list_logical_devices()) or "cpu"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    families = args.families.split(",")
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown families {unknown}; expected some of {list(FAMILIES)}")
    rows = []
    for family in families:
        row = time_family(family, args.batch, args.warmup, args.steps)
        print(json.dumps(row), file=sys.stderr, flush=True)
        rows.append(row)
    emit({"benchmark": "backbone_fit_step", "backend": keras.backend.backend(),
          "device": device_name(), "machine": platform.machine(),
          "cpu_count": os.cpu_count(), "keras": keras.__version__, "batch": args.batch,
          # flat copies of the step times, for the tables of `compgen_tf report`
          **{f"{row['family']}_step_ms": row["step_ms"] for row in rows},
          "rows": rows}, args.out)
    return 0 if all(row["loss_fell"] for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
