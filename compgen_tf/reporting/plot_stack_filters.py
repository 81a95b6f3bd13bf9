"""What each stack of a trained StackLSTM does: the filter heat maps and push profiles that
`python -m compgen_tf plot-stack-filters` draws and prints (its manual, and how to read
them, is `compgen_tf.cli.plot_stack_filters`'s docstring)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from compgen_tf.layers.stack_lstm_cell import StackLSTMCell
from compgen_tf.models.symmetry.palindromes import SYMBOLS
from compgen_tf.reporting.plotting import pyplot, save_figure

FILTER_TAPS = ("push", "keep", "pop")


def _stack_cell(model) -> StackLSTMCell:
    for layer in model.layers:
        if isinstance(getattr(layer, "cell", None), StackLSTMCell):
            return layer.cell
    raise TypeError(f"model {model.name!r} has no StackLSTMCell layer (is it a stack_lstm run?)")


def _symbol_ids(string: str) -> list[int]:
    symbols = string.split()
    if not symbols:
        raise ValueError("empty string: give symbols separated by spaces, e.g. 'a b o b a'")
    unknown = sorted({s for s in symbols if s not in SYMBOLS[1:]})
    if unknown:
        raise ValueError(f"unknown symbol(s) {unknown}; the alphabet is {list(SYMBOLS[1:])}")
    return [SYMBOLS.index(s) for s in symbols]


def stack_filter_trace(model, string: str) -> tuple[list[str], np.ndarray]:
    """The filters the model's StackLSTMCell applies while reading `string`.

    Returns:
        (symbols, filters): filters[t, n] = (push, keep, pop) weights of unit n's
        filter at input symbol t, shape (len(symbols), units, 3).
    """
    cell = _stack_cell(model)
    ids = _symbol_ids(string)
    embedded = model.get_layer("embedding")(np.array([ids], np.int32))
    h, stacks = cell.get_initial_state(batch_size=1)
    filters = []
    for t in range(len(ids)):
        inputs = embedded[:, t]
        filters.append(cell.stack_filters(inputs, h)[0])
        _, (h, stacks) = cell(inputs, [h, stacks])
    return string.split(), tf.stack(filters).numpy()


def push_profile(model, strings) -> dict[str, np.ndarray]:
    """{symbol: (units,) mean push weight of each unit while reading that symbol before
    the central `o`}, over `strings`."""
    pushes: dict[str, list[np.ndarray]] = {}
    for string in strings:
        symbols, filters = stack_filter_trace(model, string)
        centre = symbols.index("o") if "o" in symbols else len(symbols)
        for symbol, step in zip(symbols[:centre], filters[:centre]):
            pushes.setdefault(symbol, []).append(step[:, 0])
    return {symbol: np.mean(values, axis=0) for symbol, values in sorted(pushes.items())}


def plot_stack_filters(model, string: str, path) -> Path:
    """Draws the push/keep/pop weights of every unit along `string` into the PNG `path`."""
    plt = pyplot()

    symbols, filters = stack_filter_trace(model, string)
    units = filters.shape[1]
    figure, axes = plt.subplots(3, 1, sharex=True,
                                figsize=(1.5 + 0.45 * len(symbols), 1.2 + 0.75 * units))
    for tap, ax in enumerate(axes):
        image = ax.imshow(filters[:, :, tap].T, cmap="viridis", vmin=0.0, vmax=1.0,
                          aspect="auto")
        ax.set_ylabel(f"{FILTER_TAPS[tap]}\nunit")
        ax.set_yticks(range(units))
    axes[-1].set_xticks(range(len(symbols)), symbols)
    axes[-1].set_xlabel("input symbol")
    axes[0].set_title(f"stack filters reading: {string}", fontsize=9)
    figure.colorbar(image, ax=list(axes), fraction=0.04)
    return save_figure(figure, path)


def load_stack_model(run_dir):
    """The best model of a stack_lstm run; a FileNotFoundError when it has none yet."""
    import keras

    import compgen_tf.models  # noqa: F401  (registers the model classes for loading)

    model_file = Path(run_dir) / "best_model.keras"
    if not model_file.exists():
        raise FileNotFoundError(f"{model_file} does not exist (train the run first)")
    return keras.saving.load_model(model_file)
