"""Every family's `train` command on JAX, in one process: `tests/test_jax_training.py`.

    KERAS_BACKEND=jax python tests/jax_families_worker.py OUT_DIR

Trains each registered family's model that the JAX/TensorFlow equivalence of
`tests/training_worker.py` does not train (there the SCAN families train through the
library's `fit_split` on JAX; the `train` command is the same for all of them, so Syntactic
Attention stands for them here, with `counting_seq2seq`, whose run first fits its length
head), tiny, for `STEPS` updates through
`python -m compgen_tf train` (`compgen_tf.cli.main`, called in this process so that JAX and
TensorFlow are imported once), into OUT_DIR/<family>, and writes OUT_DIR/trained.json:
each family's exit code, its run's `metrics.json` backend and steps, its checkpoints,
whether its kept model loads, and whether every `fit` ran a jitted step (Keras' JAX trainer
without jit runs the step op by op, about a thousand times slower for a recurrent toy model).
"""

import json
import sys
from pathlib import Path

import keras

from compgen_tf.cli import main as command

STEPS = 2
EVERY = ["--set", "training.eval_every=2", "--set", "training.checkpoint_every=2"]
SCAN = ["--split", "simple", "--evaluate-splits", "validation", "--set",
        "data.validation_fraction=0.01"]
FAMILIES = {
    "syntactic_attention": ["--model", "syntactic_attention", *SCAN,
                            "--set", "model_args.semantic_dim=8",
                            "--set", "model_args.syntax_units=8",
                            "--set", "model_args.syntax_embedding_dim=8",
                            "--set", "model_args.encoder_units=8",
                            "--set", "model_args.max_output_length=8"],
    # Its run fits the length head first (`training.length_head_steps`), which no other
    # family's train command does.
    "counting_seq2seq": ["--model", "counting_seq2seq", *SCAN, "--set",
                         "model_args.hidden_units=8", "--set", "model_args.embedding_dim=8",
                         "--set", "model_args.max_output_length=8",
                         "--set", "training.length_head_steps=20"],
    # Mutual exclusivity: the smallest episodes (add-jump's cost twice the time here,
    # its test episode alone decoding 7,706 queries).
    "meta_seq2seq": ["--model", "meta_seq2seq", "--task", "mutual_exclusivity",
                     "--set", "model_args.hidden_units=8", "--set", "model_args.embedding_dim=8"],
    "symbol_convolution": ["--model", "symbol_convolution", "--task", "composition"],
    "stack_lstm": ["--model", "stack_lstm", "--task", "palindromes"],
    "mlp_baseline": ["--model", "mlp_baseline", "--task", "rule_learning"],
    "recurrent_baseline": ["--model", "recurrent_baseline", "--task", "composition"],
    "lstm_baseline": ["--model", "lstm_baseline", "--task", "palindromes"],
}


def record_jit(jitted: list):
    """Patches `keras.Model.fit` to append each fitted model's `jit_compile` to `jitted`."""
    fit = keras.Model.fit

    def recording_fit(model, *args, **kwargs):
        jitted.append(bool(model.jit_compile))
        return fit(model, *args, **kwargs)

    keras.Model.fit = recording_fit


def main(out_dir):
    out_dir = Path(out_dir)
    trained = {}
    jitted = []
    record_jit(jitted)
    for family, args in FAMILIES.items():
        run = out_dir / family
        jitted.clear()
        code = command(["train", *args, "--steps", str(STEPS), *EVERY, "--output", str(run),
                        "--quiet", "--backend", "jax"])
        record = {"exit_code": code}
        if code == 0:
            metrics = json.loads((run / "metrics.json").read_text())
            record.update(backend=metrics["backend"], steps=metrics["steps"],
                          checkpoints=sorted(p.name for p in (run / "checkpoints").iterdir()),
                          loads=keras.saving.load_model(run / "best_model.keras") is not None,
                          jitted=bool(jitted) and all(jitted))
        trained[family] = record
    (out_dir / "trained.json").write_text(json.dumps(trained, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
