"""Attention heat map of one translation: `python -m compgen_tf plot-attention`.

    python -m compgen_tf plot-attention --run DIR --command "jump twice after walk left"

Writes a PNG (default `DIR/attention_<command>.png`): one row per output token,
one column per input position, as in the Syntactic Attention paper's Figures
10-15. Works for every model that implements `attention_weights`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from compgen_tf.reporting.plotting import draw_heatmap, pyplot, save_figure
from compgen_tf.tokens import EOS_ID, PAD_ID


def attention_map(model, command: str):
    """Greedy translation of `command` with its attention.

    Returns:
        (input_tokens, output_tokens, weights): weights has shape
        (len(output_tokens), len(input_tokens)); the output ends with `<eos>`
        when the model emitted one.
    """
    if not hasattr(model, "attention_weights"):
        raise TypeError(f"{type(model).__name__} does not expose attention weights")
    model.check_commands([command])
    source_ids, _ = model.encode_commands([command])
    output_ids, weights = model.attention_weights(source_ids)
    source_ids, output_ids, weights = (np.asarray(source_ids)[0], np.asarray(output_ids)[0],
                                       np.asarray(weights)[0])
    n_in = int((source_ids != PAD_ID).sum())
    eos = np.flatnonzero(output_ids == EOS_ID)
    n_out = int(eos[0]) + 1 if eos.size else int((output_ids != PAD_ID).sum())
    inputs = [model.preprocessor.source_vocabulary[i] for i in source_ids[:n_in]]
    outputs = [model.preprocessor.target_vocabulary[i] for i in output_ids[:n_out]]
    return inputs, outputs, weights[:n_out, :n_in]


def plot_attention(model, command: str, path) -> Path:
    """Draws the attention of `model` translating `command` into the PNG `path`."""
    plt = pyplot()

    inputs, outputs, weights = attention_map(model, command)
    figure, axes = plt.subplots(figsize=(1.0 + 0.6 * len(inputs), 1.0 + 0.3 * len(outputs)))
    draw_heatmap(figure, axes, weights, inputs, outputs, "input", "output", command)
    figure.tight_layout()
    return save_figure(figure, path)
