"""Where meta seq2seq's training step spends its time, part by part, on TensorFlow.

    python benchmarks/meta_seq2seq_profile.py [--task add_jump_permutation] [--steps 20]
                                              [--out results/benchmarks/meta_seq2seq_profile.json]

On the task's first training episodes of seed 0 (what a real run's first steps read), each
part of the network runs forward and backward (the gradient of its outputs' sum with
respect to the variables it uses) as a `tf.function` of its own, on the inputs the full
model gives it:

- `support_commands`: the input encoder over the support commands (the memory's keys);
- `support_actions`: the output encoder over the support actions (its values);
- `queries`: the input encoder over the queries (the support items among them, with the
  support loss);
- `memory`: the key-value read and the context layer, from the three encodings;
- `decoder`: the teacher-forced decoder and its loss, from the memory;
- `step`: the model's own `train_step` (forward, backward, clip, Adam), for comparison
  with the parts' sum.

It also counts the tokens each recurrence runs over, padded (what it computes) and real
(what the episode holds): each LSTM steps over the longest item of its batch. From them,
the arithmetic of a step's LSTMs (forward and backward: three products of each step's
[input; state] with the gate kernel) and the rate this machine reaches on products of the
LSTMs' shape (`matmul_gflops`: one (rows, input + units) x (input + units, 4 units) product
repeated, rows as a support set and as the queries), which bounds the episodes a second
any implementation of this arithmetic can reach here. Prints one JSON line of medians in
milliseconds.
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
    parser.add_argument("--steps", type=int, default=20, help="episodes per repeat")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", help="also write the JSON line to this file")
    args = parser.parse_args(argv)
    argv = sys.argv[1:] if argv is None else list(argv)

    import keras
    import numpy as np
    import tensorflow as tf

    from benchmark_output import emit
    from compgen_tf import registry
    from compgen_tf.experiments.config import config_path, load_config
    from compgen_tf.experiments.episodes import MODEL_NAME, episode_batch
    from compgen_tf.models.losses import token_cross_entropy
    from compgen_tf.versions import package_versions
    from tfds_scan import episodes

    config = load_config(config_path(MODEL_NAME, args.task))
    keras.utils.set_random_seed(0)
    model = registry.build_meta_model(args.task, config["model_args"])
    backbone = model.backbone
    batches = [episode_batch(model, episodes.training_episode(args.task, 0, index),
                             model.support_loss)
               for index in range(args.steps + 1)]
    model.compile(optimizer=keras.optimizers.Adam(1e-3), clip_norm=50.0)
    ids = tf.TensorSpec([None, None], tf.int32)
    floats = tf.TensorSpec([None, None, None], tf.float32)
    mask = tf.TensorSpec([None, None], tf.bool)
    matrix = tf.TensorSpec([None, None], tf.float32)

    def gradient_of(compute, variables):
        """A tf.function: the outputs' sum and its gradient with respect to `variables`."""
        def run(*inputs):
            with tf.GradientTape() as tape:
                total = tf.reduce_sum(compute(*inputs))
            return total, tape.gradient(total, variables)
        return run

    def encoder_variables(embedding, layers):
        return embedding.trainable_variables + [v for pair in layers for lstm in pair
                                                for v in lstm.trainable_variables]

    def encoding(embedding, layers):
        return lambda x: backbone._encode(embedding, layers, x, training=True)[0]

    input_variables = encoder_variables(backbone.input_embedding, backbone.input_encoder)
    output_variables = encoder_variables(backbone.output_embedding, backbone.output_encoder)
    memory_variables = backbone.context_layer.trainable_variables

    def memory_part(steps, query_mask, keys, values):
        read, _ = backbone.memory(steps, keys, values, query_mask=query_mask)
        return backbone.context_layer(tf.concat([steps, read], axis=-1))

    def decoder_part(target_ids, context, context_mask, last_context):
        logits = backbone.decoder(target_ids, (context, context_mask, last_context),
                                  training=True)
        return token_cross_entropy(target_ids, logits)[0]

    parts = {
        "support_commands": (tf.function(gradient_of(encoding(backbone.input_embedding,
                                                              backbone.input_encoder),
                                                     input_variables), input_signature=[ids]),
                             lambda b, m: (b[0],)),
        "support_actions": (tf.function(gradient_of(encoding(backbone.output_embedding,
                                                             backbone.output_encoder),
                                                    output_variables), input_signature=[ids]),
                            lambda b, m: (b[1],)),
        "queries": (tf.function(gradient_of(encoding(backbone.input_embedding,
                                                     backbone.input_encoder),
                                            input_variables), input_signature=[ids]),
                    lambda b, m: (b[2],)),
        "memory": (tf.function(gradient_of(memory_part, memory_variables),
                               input_signature=[floats, mask, matrix, matrix]),
                   lambda b, m: m["memory"]),
        "decoder": (tf.function(gradient_of(decoder_part, backbone.decoder.trainable_variables),
                                input_signature=[ids, floats, mask, matrix]),
                    lambda b, m: (b[3], *m["decoder"])),
        "step": (tf.function(lambda *batch: model.train_step(batch), input_signature=[ids] * 4),
                 lambda b, m: b),
    }

    def part_inputs(batch):
        """The memory's and the decoder's inputs for `batch`, from the model itself."""
        support, actions, queries = (tf.constant(x) for x in batch[:3])
        steps, _, query_mask = backbone._encode(backbone.input_embedding, backbone.input_encoder,
                                                queries, True)
        _, keys, _ = backbone._encode(backbone.input_embedding, backbone.input_encoder,
                                      support, True)
        _, values, _ = backbone._encode(backbone.output_embedding, backbone.output_encoder,
                                        actions, True)
        context, context_mask, last = backbone.encode(support, actions, queries, training=True)
        return {"memory": (steps, query_mask, keys, values),
                "decoder": (context, context_mask, last)}

    prepared = [part_inputs(batch) for batch in batches]
    timings = {}
    for name, (function, select) in parts.items():
        function(*select(batches[0], prepared[0]))  # trace
        repeats = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            for batch, inputs in zip(batches[1:], prepared[1:]):
                function(*select(batch, inputs))
            repeats.append(1000 * (time.perf_counter() - start) / args.steps)
        timings[name] = round(statistics.median(repeats), 2)
    layers_per_encoder = 2 * backbone.num_layers  # forward and backward LSTMs per layer
    tokens = {"padded": {}, "real": {}}
    for name, index, recurrences in (("support_commands", 0, layers_per_encoder),
                                     ("support_actions", 1, layers_per_encoder),
                                     ("queries", 2, layers_per_encoder),
                                     ("decoder", 3, backbone.num_layers)):
        tokens["padded"][name] = round(float(np.mean([b[index].size for b in batches[1:]]))
                                       * recurrences, 1)
        tokens["real"][name] = round(float(np.mean([(b[index] > 0).sum() for b in batches[1:]]))
                                     * recurrences, 1)
    units, width = backbone.hidden_units, backbone.embedding_dim
    # Every LSTM here reads inputs of `units` or `embedding_dim` (both 200 in the paper's
    # configuration): 2 (input + units) 4 units flops a token step forward, 3x with backward.
    flops_per_token_step = 3 * 2 * (max(units, width) + units) * 4 * units
    flops = {kind: round(sum(counts.values()) * flops_per_token_step / 1e9, 3)
             for kind, counts in tokens.items()}
    rates = {}
    for rows in sorted({batches[1][0].shape[0], batches[1][2].shape[0]}):
        # 64 different left factors: identical products would be merged into one by the graph
        # optimizer.
        a = tf.random.normal([64, rows, max(units, width) + units])
        b = tf.random.normal([max(units, width) + units, 4 * units])
        product = tf.function(lambda a, b: tf.add_n([tf.reduce_sum(a[i] @ b)
                                                     for i in range(64)]))
        product(a, b)
        start = time.perf_counter()
        for _ in range(20):
            product(a, b).numpy()
        seconds = (time.perf_counter() - start) / (20 * 64)
        rates[str(rows)] = round(2 * rows * b.shape[0] * b.shape[1] / seconds / 1e9, 1)
    best_rate = max(rates.values())
    result = {"benchmark": "meta_seq2seq_profile",
              "command": "python benchmarks/meta_seq2seq_profile.py " + shlex.join(argv),
              "task": args.task, "model_args": config["model_args"],
              "cpu_count": os.cpu_count(), "ms_forward_backward": timings,
              "ms_parts_sum": round(sum(v for k, v in timings.items() if k != "step"), 2),
              "lstm_token_steps": tokens, "lstm_gflop_per_step": flops,
              "matmul_gflops": rates,
              "episodes_per_s_at_matmul_rate": {
                  kind: round(best_rate / value, 1) for kind, value in flops.items()},
              "versions": package_versions()}
    emit(result, args.out)


if __name__ == "__main__":
    main()
