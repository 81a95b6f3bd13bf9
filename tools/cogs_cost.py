"""What a COGS run costs: seconds per training update and per batch of gen decoded.

    python tools/cogs_cost.py --model seq2seq [--steps 60] [--rows 512]

Builds the model of `configs/<model>/cogs.json` on COGS's training vocabularies, times
`--steps` updates of one fit (the median of the later half, which leaves out tracing),
then decodes one batch of `--rows` gen sentences twice: the first lines of gen and its
longest sentences. An untrained model never emits `<eos>`, so each batch runs to
`max_output_length` (481): the worst case of a batch. Nothing is trained to convergence or
scored; the figures set the training budgets of the COGS configurations
(docs/research/benchmarks.md).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import keras

import tfds_scan
from compgen_tf.experiments.config import config_path, load_config
from compgen_tf.experiments.scan import SCAN
from compgen_tf.training.data import encode_split
from compgen_tf.training.evaluation import evaluate_split
from compgen_tf.training.fit import fit_split


def main(argv=None) -> None:
    """Prints the seconds per update and per decoded batch of `--model` on COGS."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="seq2seq", choices=("seq2seq", "syntactic_attention", "transformer"))
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--rows", type=int, default=512)
    args = parser.parse_args(argv)
    config = load_config(config_path(args.model, "cogs"))
    config.update(model=args.model, split="cogs")
    run = SCAN.run_config(config)
    keras.utils.set_random_seed(0)
    data = SCAN.training_data(run, 0)
    model = SCAN.new_model(run, data)
    fit = encode_split(model, data["fit"])
    # A few dev lines: the validation that ends the timed fit stays short.
    validation = encode_split(model, data["validation"][:8], unknown_words="unk")
    ends = []
    # The time of each update from one fit: the first ones trace a step for each new padded
    # shape (length buckets), so the median of the later intervals is the update's cost.
    timer = keras.callbacks.LambdaCallback(
        on_train_batch_end=lambda batch, logs: ends.append(time.perf_counter()))
    with tempfile.TemporaryDirectory() as scratch:
        settings = dict(config["training"], max_steps=args.steps, eval_every=args.steps,
                        checkpoint_every=10 ** 6, patience=100)
        fit_split(model, settings, Path(scratch) / "run", fit, validation, seed=0, verbose=0,
                  callbacks=[timer])
    intervals = [later - earlier for earlier, later in zip(ends, ends[1:])]
    per_update = statistics.median(intervals[len(intervals) // 2:])
    print(f"{args.model}: {per_update:.3f} s per update (batch "
          f"{config['training']['batch_size']}; median of updates "
          f"{len(intervals) // 2 + 2}-{len(ends)})")
    gen = tfds_scan.load_pairs("cogs", "gen")
    longest = sorted(gen, key=lambda pair: -len(pair[0].split()))
    for name, rows in (("first gen sentences", gen[:args.rows]),
                       ("longest gen sentences", longest[:args.rows])):
        split = encode_split(model, rows, unknown_words="unk")
        start = time.perf_counter()
        evaluate_split(model, split, batch_size=args.rows)
        print(f"{args.model}: {time.perf_counter() - start:.1f} s to decode one batch of "
              f"{args.rows} {name} to at most {model.max_output_length} tokens")


if __name__ == "__main__":
    main()
