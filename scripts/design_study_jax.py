"""Issue 35's design study at scale: Syntactic Attention variants on the add-jump dev splits,
trained with plain `keras.Model.fit` on any Keras backend (made for JAX on a GPU machine
that has no TensorFlow).

Two steps:

    # here, with TensorFlow: the dev splits as id arrays, read through tfds_scan
    python scripts/design_study_jax.py export --out .devstudy
    # anywhere, e.g. KERAS_BACKEND=jax on the device machine: train every job, N at a time
    KERAS_BACKEND=jax python scripts/design_study_jax.py train --data .devstudy \\
        --out results.jsonl --workers 8 --end 540

Why a second trainer: the library's `fit` path (`compgen_tf.training.train_step`) is
TensorFlow's, and a seed of Syntactic Attention takes 20-30 minutes on the 2-core CPU,
so a study of several variants over several dev splits and seeds would take days there.
This script trains the same backbone (`SyntacticAttentionBackbone`) in the regime of
`configs/syntactic_attention/default.json`: batch 16, Adam 1e-3, the global gradient norm
clipped at 5, a token-mean cross-entropy over the non-padding targets, validation exact
match every 800 steps (ties broken by validation loss), stop at 100% validation, at most
12,800 steps, the best validated weights scored on the dev test side. It differs from the
library's path in the backend, the random streams (dropout, batch order) and in padding
every command to 11 tokens and every output to 49 (one compiled shape) rather than each
batch to a multiple of 8: its figures
rank variants, and the variant it picks is then trained through the library
(`compgen_tf reproduce`) before anything is reported as a result.

Exact match without a decoding loop: Syntactic Attention's decoder never reads its own
outputs, so greedy decoding is the argmax of the teacher-forced logits (the export step
checks this against the library's greedy decoder).

The dev splits are built from the add-jump training file only (docs/dev_splits.md); no job
reads the add-jump test set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

SPLITS = ("addjump_dev_run", "addjump_dev_walk", "addjump_dev_look")
SOURCE_LENGTH = 11  # <sos>, at most 9 words, <eos>
TARGET_LENGTH = 49  # at most 48 actions, <eos>
PAD_ID, SOS_ID, EOS_ID = 0, 2, 3
TRAINING = {"batch_size": 16, "learning_rate": 1e-3, "clip_norm": 5.0, "max_steps": 12800,
            "eval_every": 800}
# The candidates: overrides of configs/syntactic_attention/default.json's model_args.
# "tie" stands for syntax_tying="bare_words" (ids from the split's training commands).
CANDIDATES = {
    "default": {},
    "l2": {"syntax_embeddings_l2": 1e-5},
    "tie": {"tie": True},
    "tie_zero_boundary": {"tie": True, "learned_boundary_semantics": False},
    "l2_zero_boundary": {"syntax_embeddings_l2": 1e-5, "learned_boundary_semantics": False},
}


# ------------------------------------------------------------------ export (TensorFlow)
def export(out: Path, splits) -> None:
    from compgen_tf import registry
    from compgen_tf.experiments.config import load_config
    from compgen_tf.experiments.scan import split_examples, vocabularies
    from compgen_tf.models.syntactic_attention.syntactic_attention import bare_word_ties

    config = load_config(ROOT / "configs/syntactic_attention/default.json")
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"model_args": config["model_args"], "training": TRAINING, "splits": {}}
    for split in splits:
        parts = {part: split_examples(split, part, config["data"])
                 for part in ("train", "fit", "validation", "test")}
        source, target = vocabularies(parts["train"])
        arrays = {}
        for part in ("fit", "validation", "test"):
            commands, actions = zip(*parts[part])
            arrays[f"{part}_source"] = _pad([[SOS_ID, *source.ids(c), EOS_ID] for c in commands],
                                            SOURCE_LENGTH)
            arrays[f"{part}_target"] = _pad([[*target.ids(a), EOS_ID] for a in actions],
                                            TARGET_LENGTH)
        np.savez_compressed(out / f"{split}.npz", **arrays)
        tied, lenders = bare_word_ties(c for c, _ in parts["train"])
        manifest["splits"][split] = {
            "source_vocabulary_size": len(source), "target_vocabulary_size": len(target),
            "tied_words": tied, "lender_words": lenders,
            "tied_ids": [source.ids(w)[0] for w in tied],
            "lender_ids": [source.ids(w)[0] for w in lenders],
            "sizes": {part: len(parts[part]) for part in parts}}
        _check_encoding_and_greedy(registry, config, source, target, parts["validation"][:64],
                                   arrays)
        print(split, manifest["splits"][split]["sizes"], "tied", tied, "lenders", lenders)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


def _pad(rows, length) -> np.ndarray:
    array = np.full((len(rows), length), PAD_ID, dtype="int32")
    for i, row in enumerate(rows):
        array[i, :len(row)] = row
    return array


def _check_encoding_and_greedy(registry, config, source, target, examples, arrays) -> None:
    """The exported ids are the library's, and argmax of the teacher-forced logits is the
    library's greedy decoding (random weights, the first validation commands)."""
    from keras import ops

    model = registry.build_model("syntactic_attention", config["model_args"], source.words,
                                 target.words)
    commands = [c for c, _ in examples]
    ids, _ = model.encode_commands(commands)
    ids = ops.convert_to_numpy(ids)
    exported = arrays["validation_source"][:len(commands)]
    if not np.array_equal(_pad([r[r != PAD_ID] for r in ids], SOURCE_LENGTH), exported):
        raise SystemExit("exported source ids differ from the library's preprocessor")
    greedy = ops.convert_to_numpy(model.greedy_decode(exported, max_length=TARGET_LENGTH))
    logits = model.backbone({"source_ids": exported,
                             "target_ids": arrays["validation_target"][:len(commands)]})
    argmax = ops.convert_to_numpy(ops.argmax(logits, axis=-1))
    for g, a in zip(greedy, argmax):
        end = int(np.argmax(g == EOS_ID)) if (g == EOS_ID).any() else len(g) - 1
        if not np.array_equal(g[:end + 1], a[:end + 1]):
            raise SystemExit("argmax of the teacher-forced logits is not the greedy decoding")


# -------------------------------------------------------------------- train (any backend)
def jobs(candidates, splits, seeds) -> list[dict]:
    """Every (candidate, split, seed), seed-major so that a cut-off study stays balanced."""
    return [{"candidate": c, "split": s, "seed": seed}
            for seed in seeds for s in splits for c in candidates]


def exact_match(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Per row: the argmax ids equal the target up to and including its `<eos>`."""
    predicted = logits.argmax(-1)
    real = targets != PAD_ID
    return np.all((predicted == targets) | ~real, axis=1)


def masked_loss(logits: np.ndarray, targets: np.ndarray) -> float:
    """Mean cross-entropy over the non-padding targets."""
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], -1)[..., 0]
    real = targets != PAD_ID
    return float(-(picked * real).sum() / real.sum())


def train_job(job: dict, data_dir: Path, manifest: dict, training: dict) -> dict:
    import keras

    from compgen_tf.models.syntactic_attention.syntactic_attention_backbone import (
        SyntacticAttentionBackbone)

    started = time.perf_counter()
    split = manifest["splits"][job["split"]]
    data = np.load(data_dir / f"{job['split']}.npz")
    args = dict(manifest["model_args"])
    for key in ("max_input_length", "max_output_length"):  # the task model's, not the backbone's
        args.pop(key, None)
    overrides = dict(CANDIDATES[job["candidate"]])
    if overrides.pop("tie", False):
        args.update(syntax_tied_ids=split["tied_ids"], syntax_lender_ids=split["lender_ids"])
    args.update(overrides)
    keras.utils.set_random_seed(job["seed"])
    model = SyntacticAttentionBackbone(split["source_vocabulary_size"],
                                       split["target_vocabulary_size"], **args)
    model.compile(optimizer=keras.optimizers.Adam(training["learning_rate"],
                                                  global_clipnorm=training["clip_norm"]),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                                  ignore_class=PAD_ID),
                  jit_compile=training.get("jit_compile", "auto"))
    fit_source, fit_target = data["fit_source"], data["fit_target"]
    rng = np.random.default_rng(job["seed"])
    order = np.empty(0, dtype=int)
    batch, every = training["batch_size"], training["eval_every"]

    def next_rows(count):
        nonlocal order
        while len(order) < count:
            order = np.concatenate([order, rng.permutation(len(fit_source))])
        rows, order = order[:count], order[count:]
        return rows

    def scores(part, batch_size=1024):
        source, target = data[f"{part}_source"], data[f"{part}_target"]
        # Every batch full (rows repeated, then dropped): one shape, one compile.
        extra = -len(source) % batch_size
        logits = model.predict({"source_ids": np.resize(source, (len(source) + extra,
                                                                 source.shape[1])),
                                "target_ids": np.resize(target, (len(target) + extra,
                                                                 target.shape[1]))},
                               batch_size=batch_size, verbose=0)[:len(source)]
        return float(exact_match(logits, target).mean()), masked_loss(logits, target)

    best = {"val_accuracy": -1.0, "val_loss": float("inf"), "step": 0}
    best_weights, curve, step = None, [], 0
    while step < training["max_steps"]:
        rows = next_rows(every * batch)
        history = model.fit({"source_ids": fit_source[rows], "target_ids": fit_target[rows]},
                            fit_target[rows], batch_size=batch, epochs=1, shuffle=False,
                            verbose=0)
        step += every
        accuracy, loss = scores("validation")
        curve.append([step, round(accuracy, 5), round(float(history.history["loss"][-1]), 5)])
        if accuracy > best["val_accuracy"] or (accuracy == best["val_accuracy"]
                                               and loss < best["val_loss"]):
            best = {"val_accuracy": accuracy, "val_loss": loss, "step": step}
            best_weights = model.get_weights()
        if accuracy >= 1.0:
            break
    model.set_weights(best_weights)
    test_accuracy, _ = scores("test")
    return {**job, "test_accuracy": round(test_accuracy, 5),
            "val_accuracy": round(best["val_accuracy"], 5), "best_step": best["step"],
            "steps": step, "wall_time_s": round(time.perf_counter() - started, 1),
            "tied_ids": model.syntax_embedding.tied_ids, "validation_curve": curve,
            "backend": keras.backend.backend()}


def expected_job_seconds(out: str, default: float) -> float:
    """The longest wall time of the jobs finished so far (`default` before the first)."""
    times = []
    if Path(out).exists():
        for line in Path(out).read_text().splitlines():
            try:  # another worker may be writing its line
                times.append(json.loads(line).get("wall_time_s", 0.0))
            except json.JSONDecodeError:
                continue
    return max(times, default=default)


def worker(index: int, queue, data_dir: str, out: str, end: float, training: dict,
           first_guess: float) -> None:
    data_dir = Path(data_dir)
    manifest = json.loads((data_dir / "manifest.json").read_text())
    # A job starts only if it can be expected to end before `end` (when the machine's time
    # runs out, a job in flight is lost).
    while time.time() + expected_job_seconds(out, first_guess) < end:
        try:
            job = queue.get_nowait()
        except Exception:  # queue.Empty
            return
        try:
            record = train_job(job, data_dir, manifest, training)
        except Exception as error:  # one job's failure must not lose the others'
            record = {**job, "error": f"{type(error).__name__}: {error}"}
        record["worker"] = index
        with open(out, "a") as handle:
            handle.write(json.dumps(record) + "\n")
        print(json.dumps({k: v for k, v in record.items() if k != "validation_curve"}),
              flush=True)


def train(args) -> None:
    import multiprocessing

    training = dict(TRAINING)
    if args.max_steps:
        training["max_steps"] = args.max_steps
    if args.eval_every:
        training["eval_every"] = args.eval_every
    todo = jobs(args.candidates.split(","), args.splits.split(","),
                range(args.first_seed, args.first_seed + args.seeds))
    done = set()
    if Path(args.out).exists():  # a rerun skips finished jobs
        for line in Path(args.out).read_text().splitlines():
            record = json.loads(line)
            if "error" not in record:
                done.add((record["candidate"], record["split"], record["seed"]))
    todo = [j for j in todo if (j["candidate"], j["split"], j["seed"]) not in done]
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    for job in todo:
        queue.put(job)
    end = time.time() + args.end
    processes = [context.Process(target=worker, args=(i, queue, args.data, args.out, end,
                                                      training, args.first_guess))
                 for i in range(args.workers)]
    for process in processes:
        process.start()
        time.sleep(args.stagger)
    for process in processes:
        process.join()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    exporting = sub.add_parser("export", help="write the dev splits as id arrays (TensorFlow)")
    exporting.add_argument("--out", type=Path, required=True)
    exporting.add_argument("--splits", default=",".join(SPLITS))
    training = sub.add_parser("train", help="train every job (any Keras backend)")
    training.add_argument("--data", required=True)
    training.add_argument("--out", required=True, help="a JSON-lines file; finished jobs skip")
    training.add_argument("--candidates", default=",".join(CANDIDATES))
    training.add_argument("--splits", default=",".join(SPLITS))
    training.add_argument("--seeds", type=int, default=3)
    training.add_argument("--first-seed", type=int, default=0)
    training.add_argument("--workers", type=int, default=1)
    training.add_argument("--end", type=float, default=3600.0,
                          help="seconds from now by which every job must have ended: a job "
                               "starts only if the longest one so far would end in time")
    training.add_argument("--first-guess", type=float, default=240.0,
                          help="the expected seconds of a job before one has finished")
    training.add_argument("--stagger", type=float, default=2.0,
                          help="seconds between worker starts")
    training.add_argument("--max-steps", type=int, help="override (smoke tests)")
    training.add_argument("--eval-every", type=int, help="override (smoke tests)")
    args = parser.parse_args(argv)
    if args.command == "export":
        export(args.out, args.splits.split(","))
    else:
        unknown = set(args.candidates.split(",")) - set(CANDIDATES)
        if unknown:
            parser.error(f"unknown candidates {sorted(unknown)}; known: {list(CANDIDATES)}")
        train(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
