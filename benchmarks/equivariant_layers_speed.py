"""Speed of the equivariant layers alone: one encoder-decoder-shaped training step.

    python benchmarks/equivariant_layers_speed.py [--batch-size 32] [--out FILE]

A `keras.layers.RNN(GLSTMCell)` encoder over 12 steps and a 20-step decoder loop of
`GroupConv` -> `GLSTMCell` -> `GDecode` with prepared kernels (the shape of the
equivariant seq2seq's step, without its data pipeline), forward and backward, in a
`tf.function` with and without XLA. Prints one JSON line: training steps a second (best
of the repeats). With `benchmarks/compare_commits.py` it times two versions of the layers
in one run.
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

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from benchmark_output import emit  # noqa: E402
from compgen_tf.layers import GDecode, GLSTMCell, GroupConv  # noqa: E402
from compgen_tf.versions import package_versions  # noqa: E402

ACTIONS = ["<pad>", "<unk>", "<sos>", "<eos>", "I_JUMP", "I_LOOK", "I_RUN", "I_WALK",
           "I_TURN_LEFT", "I_TURN_RIGHT"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10, help="train steps per repeat")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)
    batch, units, order = args.batch_size, args.units, 4
    keras.utils.set_random_seed(0)
    encoder = keras.layers.RNN(GLSTMCell("verb", units), return_sequences=True)
    decoder_input = GroupConv("verb", 2 * units)
    decoder_cell = GLSTMCell("verb", 2 * units)
    decode = GDecode("verb", ACTIONS)
    inputs = tf.random.normal([batch, 12, order * units])
    encoder(inputs)
    decoder_input(tf.zeros([batch, order, 2 * units]))
    decode(tf.zeros([batch, order, 2 * units]))
    state = [tf.zeros([batch, order * 2 * units])] * 2
    decoder_cell(state[0], state)
    variables = [v for layer in (encoder, decoder_input, decoder_cell, decode)
                 for v in layer.trainable_variables]

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(encoder(inputs))
            cell_kernel, input_kernel = decoder_cell.prepare_kernel(), \
                decoder_input.prepare_kernel()
            decode_kernel = decode.prepare_kernel()
            h = state
            for _ in range(20):
                x = decoder_input(tf.reshape(h[0], [batch, order, 2 * units]), input_kernel)
                output, h = decoder_cell(tf.reshape(x, [batch, -1]), h,
                                         prepared_kernel=cell_kernel)
                loss += tf.reduce_sum(decode(tf.reshape(output, [batch, order, 2 * units]),
                                             decode_kernel))
        return tape.gradient(loss, variables)

    result = {"benchmark": "equivariant_layers_speed",
              "command": "python benchmarks/equivariant_layers_speed.py " + shlex.join(argv),
              "batch_size": batch, "units": units, "versions": package_versions()}
    for jit in (False, True):
        compiled = tf.function(step, jit_compile=jit)
        compiled()
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            for _ in range(args.steps):
                compiled()
            times.append((time.perf_counter() - start) / args.steps)
        result[f"train_steps_per_s_{'xla' if jit else 'no_xla'}"] = round(1 / min(times), 2)
    emit(result, args.out)


if __name__ == "__main__":
    main()
