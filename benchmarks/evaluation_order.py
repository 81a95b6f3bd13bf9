"""Scoring a split in the file's order against shortest source first: seconds and decode steps.

    python benchmarks/evaluation_order.py --run RUN_DIR [--part gen] [--repeats 2] [--out FILE]

`compgen_tf.training.evaluation.evaluate_split` greedy-decodes a split in batches of 512, each
until its longest output ends. Before this change the batches were cut in the split's order;
now the rows go shortest source first, so that a batch's rows end at about the same step.
Both ways score the same trained run's `--part` (COGS' gen set by default, 21,000 sentences
whose logical forms have 1 to 480 tokens) in one process, in turn (file order, sorted, file
order, ...), after one untimed pass that traces the decoding graph. `decode_steps` is the
sum over batches of the longest decoded output up to its `<eos>` (the steps each batch ran); both ways must
give the same exact match and the same outputs row by row.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from benchmarks.benchmark_output import emit  # noqa: E402

BATCH = 512


def batch_steps(predicted) -> int:
    """The steps a batch's decoding ran: its longest row up to and with its `<eos>` (the
    width, for a row that never ends); the decoder pads its output to a fixed width."""
    import numpy as np

    from compgen_tf.tokens import EOS_ID

    ids = np.asarray(predicted)
    ended = ids == EOS_ID
    return int(np.where(ended.any(axis=1), ended.argmax(axis=1) + 1, ids.shape[1]).max())


def file_order(model, split):
    """The loop as it was before this change: batches in the split's order."""
    import numpy as np

    from compgen_tf.training.evaluation import sequences_equal

    correct, predictions, steps = [], [], 0
    for start in range(0, len(split), BATCH):
        predicted = model._greedy_decode_graph(split.source_ids[start:start + BATCH])
        steps += batch_steps(predicted)
        correct.append(sequences_equal(predicted.numpy(),
                                       split.target_ids[start:start + BATCH]))
        actions, _ = model.decode_actions(predicted)
        predictions.extend(a.decode() for a in actions.numpy())
    return np.concatenate(correct), predictions, steps


def shortest_first(model, split):
    """The library's `evaluate_split`, counting its batches' steps."""
    from compgen_tf.training.evaluation import evaluate_split

    steps = []
    decode = model._greedy_decode_graph

    def counted(source):
        predicted = decode(source)
        steps.append(batch_steps(predicted))
        return predicted

    model._greedy_decode_graph = counted
    try:
        result = evaluate_split(model, split, batch_size=BATCH)
    finally:
        model._greedy_decode_graph = decode
    return result.correct, result.predictions, sum(steps)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run", required=True)
    parser.add_argument("--part", default="gen")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out")
    args = parser.parse_args(argv)

    import numpy as np

    from compgen_tf.experiments.experiment import load_run_model, run_config
    from compgen_tf.experiments.scan import split_examples, unknown_words
    from compgen_tf.training.data import encode_split
    from compgen_tf.versions import package_versions, source_commit

    record = run_config(args.run)
    model = load_run_model(args.run)
    examples = split_examples(record["split"], args.part, record["data"], record["seed"])
    split = encode_split(model, examples, unknown_words=unknown_words(record["split"]))
    model._greedy_decode_graph(split.source_ids[:BATCH])  # trace once, untimed
    ways = {"file_order": file_order, "shortest_first": shortest_first}
    seconds = {way: [] for way in ways}
    outputs = {}
    for _ in range(args.repeats):
        for way, score in ways.items():
            start = time.perf_counter()
            correct, predictions, steps = score(model, split)
            seconds[way].append(round(time.perf_counter() - start, 2))
            outputs[way] = (correct, predictions, steps)
    same = (np.array_equal(outputs["file_order"][0], outputs["shortest_first"][0])
            and outputs["file_order"][1] == outputs["shortest_first"][1])
    emit({"benchmark": "evaluation_order", "run": args.run, "model": record["model"],
          "split": record["split"], "part": args.part, "rows": len(split), "batch": BATCH,
          "seconds": seconds,
          "decode_steps": {way: outputs[way][2] for way in ways},
          "exact_match": {way: float(outputs[way][0].mean()) for way in ways},
          "same_outputs_row_by_row": bool(same),
          "speedup_median": round(float(np.median(seconds["file_order"])
                                        / np.median(seconds["shortest_first"])), 2),
          "command": "python benchmarks/evaluation_order.py " + " ".join(
              sys.argv[1:] if argv is None else argv),
          "cpu_count": os.cpu_count(), "platform": platform.platform(),
          "versions": {**package_versions(), "commit": source_commit()}}, args.out)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
