"""Checks that Syntactic Attention's greedy shortcuts decode as its Keras layers do.

    python tools/check_greedy_shortcuts.py --run runs/syntactic_attention/addprim_jump/seed0
        [--out results/checks/greedy_shortcuts_syntactic_attention_addprim_jump_seed0.json]

Greedy decoding takes two shortcuts that are equal to the layers up to float rounding: the
encoders' input products of all steps in one product per direction
(`compgen_tf.models.lstm_inference.bidirectional_lstm`), and the attention keys projected
through the decoder LSTM's input kernel once per command
(`SyntacticAttentionDecoder.prepare_greedy` / `greedy_step`) instead of projecting each
step's context. This decodes every SCAN command (20,910, in batches of 1,024) with a trained
run's model both ways, with the shortcuts and with the Keras layers and the training step,
and counts the commands whose decoded ids differ, with the largest attention difference and
the time of each way. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from compgen_tf.analysis.output import emit  # noqa: E402
from compgen_tf.experiments.experiment import load_run_model  # noqa: E402
from compgen_tf.models.recurrent_decoder import RecurrentDecoder  # noqa: E402
from compgen_tf.models.syntactic_attention import syntactic_attention_backbone  # noqa: E402
from tfds_scan import grammar  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True, help="a trained Syntactic Attention run")
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)

    model = load_run_model(args.run)
    decoder = model.backbone.decoder

    def by_layers(source_ids):  # the Keras layers and the training step, no shortcut
        decoder.prepare_greedy = lambda memory: RecurrentDecoder.prepare_greedy(decoder, memory)
        decoder.greedy_step = lambda *a: RecurrentDecoder.greedy_step(decoder, *a)
        syntactic_attention_backbone.bidirectional_lstm = (
            lambda layer, inputs, mask=None, training=False: layer(inputs, mask=mask,
                                                                   training=training))
        try:
            return model.greedy_decode_with_attention(source_ids)
        finally:
            del decoder.prepare_greedy, decoder.greedy_step
            syntactic_attention_backbone.bidirectional_lstm = shortcut

    shortcut = syntactic_attention_backbone.bidirectional_lstm
    ways = {"shortcuts": tf.function(model.greedy_decode_with_attention, reduce_retracing=True),
            "layers": tf.function(by_layers, reduce_retracing=True)}
    commands = grammar.all_commands()
    seconds = dict.fromkeys(ways, 0.0)
    differing, largest = 0, 0.0
    for start in range(0, len(commands), 1024):
        source_ids, _ = model.encode_commands(tf.constant(commands[start:start + 1024]))
        out = {}
        for name, decode in ways.items():
            began = time.perf_counter()
            ids, attention = decode(source_ids)
            out[name] = (ids.numpy(), attention.numpy())
            seconds[name] += time.perf_counter() - began
        differing += int(np.any(out["layers"][0] != out["shortcuts"][0], axis=1).sum())
        largest = max(largest, float(np.abs(out["layers"][1] - out["shortcuts"][1]).max()))
    result = {"check": "greedy_shortcuts", "run": str(args.run), "commands": len(commands),
              "commands_with_differing_ids": differing,
              "largest_attention_difference": largest,
              "seconds": {name: round(value, 1) for name, value in seconds.items()}}
    emit(result, args.out, "check_greedy_shortcuts.py", argv)
    return 0 if differing == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
