"""Memory and decoder attention of a meta seq2seq learner for one query (Lake 2019, Fig. A.1/A.2).

    python -m compgen_tf plot-meta-attention --run runs/meta_seq2seq/mutual_exclusivity/seed0 \\
        --query "lug zup lug wif dax zup"

Writes a PNG with two heat maps: left, the key-value memory attention (rows: query
input steps, columns: support items); right, the decoder attention (rows: output
steps, columns: query input steps). The support set is the task's first test
episode unless `--support "COMMAND=ACTIONS"` items are given.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from compgen_tf.reporting.plotting import draw_heatmap, pyplot, save_figure
from compgen_tf.tokens import EOS, EOS_ID, PAD_ID


def episode_attention(model, support_commands, support_actions, query: str):
    """Greedy translation of `query` given the support pairs, with both attentions.

    Returns:
        dict with `inputs` (query tokens, `<eos>` included), `outputs` (output
        tokens, `<eos>` included when emitted), `memory` (len(inputs), support)
        and `decoder` (len(outputs), len(inputs)) weights.
    """
    support_commands, support_actions = list(support_commands), list(support_actions)
    model.check_commands(support_commands + [query])
    support_ids, action_ids, query_ids = model.encode_episode_arrays(
        support_commands, support_actions, [query])
    output_ids, decoder, memory = model.greedy_decode_episode(support_ids, action_ids, query_ids)
    output_ids, decoder, memory = (np.asarray(output_ids)[0], np.asarray(decoder)[0],
                                   np.asarray(memory)[0])
    n_in = int((query_ids[0] != PAD_ID).sum())
    eos = np.flatnonzero(output_ids == EOS_ID)
    n_out = int(eos[0]) + 1 if eos.size else int((output_ids != PAD_ID).sum())
    return {"inputs": query.split() + [EOS],
            "outputs": [model.preprocessor.target_vocabulary[i] for i in output_ids[:n_out]],
            "memory": memory[:n_in], "decoder": decoder[:n_out, :n_in]}


def plot_episode_attention(model, support_commands, support_actions, query: str, path) -> Path:
    """Draws the memory and decoder attention for `query` into the PNG `path`."""
    plt = pyplot()

    result = episode_attention(model, support_commands, support_actions, query)
    support_labels = [f"{c} → {a}" if len(c) + len(a) < 40 else c
                      for c, a in zip(support_commands, support_actions)]
    width = 2.0 + 0.5 * (len(support_labels) + len(result["inputs"]))
    height = 2.5 + 0.3 * max(len(result["inputs"]), len(result["outputs"]))
    figure, (left, right) = plt.subplots(1, 2, figsize=(max(width, 8), height))
    for axes, weights, xs, ys, title, xlabel, ylabel in (
            (left, result["memory"], support_labels, result["inputs"], "memory attention",
             "support item", "query step"),
            (right, result["decoder"], result["inputs"], result["outputs"], "decoder attention",
             "query step", "output step")):
        draw_heatmap(figure, axes, weights, xs, ys, xlabel, ylabel, title, fontsize=8)
    figure.suptitle(f"{query} → {' '.join(t for t in result['outputs'] if t != EOS)}",
                    fontsize=9)
    figure.tight_layout()
    return save_figure(figure, path)


def default_support(run_dir):
    """(support commands, support actions) of the first test episode of a meta seq2seq run's
    task: the support set plotted when none is given."""
    from tfds_scan import episodes

    task = json.loads((Path(run_dir) / "config.json").read_text())["split"]
    episode = episodes.test_episodes(task)[0]
    return episode.support_commands, episode.support_actions
