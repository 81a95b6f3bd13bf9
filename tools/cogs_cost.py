"""What a COGS run costs: seconds per training update and per batch of gen decoded.

    python tools/cogs_cost.py --model seq2seq [--steps 60] [--rows 512]

Builds the model of `configs/<model>/cogs.json` on COGS's training vocabularies, times
`--steps` updates against 10 (the difference, per update, leaves out tracing and start-up),
then decodes one batch of `--rows` gen sentences twice: the first lines of gen and its
longest sentences. An untrained model never emits `<eos>`, so each batch runs to
`max_output_length` (481): the worst case of a batch. Nothing is trained to convergence or
scored; the figures set the training budgets of the COGS configurations
(docs/research/benchmarks.md).
"""

from __future__ import annotations

import argparse
import shutil
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
    # A few dev lines: the validation that ends each timed fit stays short.
    validation = encode_split(model, data["validation"][:64], unknown_words="unk")
    seconds = {}
    with tempfile.TemporaryDirectory() as scratch:
        for steps in (10, args.steps):
            run_dir = Path(scratch) / str(steps)
            settings = dict(config["training"], max_steps=steps, eval_every=steps,
                            checkpoint_every=10 ** 6, patience=100)
            start = time.perf_counter()
            fit_split(model, settings, run_dir, fit, validation, seed=0, verbose=0)
            seconds[steps] = time.perf_counter() - start
            shutil.rmtree(run_dir)
    per_update = (seconds[args.steps] - seconds[10]) / (args.steps - 10)
    print(f"{args.model}: {per_update:.3f} s per update (batch "
          f"{config['training']['batch_size']})")
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
