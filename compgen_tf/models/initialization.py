"""Weight initialization schemes: Keras' defaults, or PyTorch's (the papers' reference code).

The SCAN papers' reference implementations are PyTorch programs that keep PyTorch's default
initialization. A model built here with `weight_initialization="pytorch"` draws its LSTM and
dense weights as those programs do:

- `nn.LSTM` / `nn.LSTMCell`: every kernel, recurrent kernel and bias from U(-k, k) with
  k = 1/sqrt(units). PyTorch has two bias vectors per LSTM (b_ih and b_hh) where Keras has
  one, so the Keras bias is drawn as their sum (`SumOfUniforms`), and no forget-gate bias
  of 1 is added (Keras' `unit_forget_bias`).
- `nn.Linear`: kernel and bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (its
  `kaiming_uniform_(a=sqrt(5))` bound works out to that).

Keras' defaults (`"keras"`) are Glorot-uniform kernels, orthogonal recurrent kernels, zero
biases and a forget-gate bias of 1. Embeddings are not covered here: each model has its own
embedding initializer argument (PyTorch's `nn.Embedding` draws N(0, 1)).
"""

from __future__ import annotations

import math

import keras

WEIGHT_INITIALIZATIONS = ("keras", "pytorch")


@keras.saving.register_keras_serializable(package="compgen_tf")
class SumOfUniforms(keras.initializers.Initializer):
    """The sum of `terms` independent draws from U(-limit, limit).

    PyTorch's LSTM adds two bias vectors, each drawn from U(-k, k); a Keras LSTM has one
    bias, which this initializer draws with the same distribution as their sum.

    Args:
        limit: the half-width of each uniform draw (positive).
        terms: how many draws are added (a positive integer; default 2).
        seed: None, or an integer from which each term's seed is derived.

    Example:
        >>> bias = SumOfUniforms(limit=0.1)((8,))  # each value in [-0.2, 0.2]
    """

    def __init__(self, limit, terms=2, seed=None):
        if not float(limit) > 0.0:
            raise ValueError(f"SumOfUniforms: limit must be positive, got {limit}")
        if isinstance(terms, bool) or not isinstance(terms, int) or terms < 1:
            raise ValueError(f"SumOfUniforms: terms must be a positive integer, got {terms!r}")
        self.limit, self.terms, self.seed = float(limit), terms, seed
        # One RandomUniform per term: with seed None each picks a seed of its own, so the
        # terms are independent draws rather than one draw counted twice.
        self._terms = [keras.initializers.RandomUniform(
            -self.limit, self.limit, seed=None if seed is None else seed + i)
            for i in range(terms)]

    def __call__(self, shape, dtype=None):
        total = self._terms[0](shape, dtype=dtype)
        for term in self._terms[1:]:
            total = total + term(shape, dtype=dtype)
        return total

    def get_config(self):
        return {"limit": self.limit, "terms": self.terms, "seed": self.seed}


def check_weight_initialization(value: str) -> str:
    """`value` if it names a scheme of `WEIGHT_INITIALIZATIONS`, else a ValueError."""
    if value not in WEIGHT_INITIALIZATIONS:
        raise ValueError(f"weight_initialization must be one of {', '.join(WEIGHT_INITIALIZATIONS)}"
                         f", got {value!r}")
    return value


def lstm_initializers(units: int, scheme: str) -> dict:
    """Keyword arguments of `keras.layers.LSTM` / `LSTMCell` with `units` units for
    `scheme`; empty for `"keras"` (Keras' own defaults). Fresh initializers on every
    call, so no two weights share a draw."""
    if check_weight_initialization(scheme) == "keras":
        return {}
    k = 1.0 / math.sqrt(units)
    return {"kernel_initializer": keras.initializers.RandomUniform(-k, k),
            "recurrent_initializer": keras.initializers.RandomUniform(-k, k),
            "bias_initializer": SumOfUniforms(k), "unit_forget_bias": False}


def dense_initializers(fan_in: int, scheme: str, use_bias: bool = True) -> dict:
    """Keyword arguments of `keras.layers.Dense` with `fan_in` inputs for `scheme`; empty
    for `"keras"`."""
    if check_weight_initialization(scheme) == "keras":
        return {}
    bound = 1.0 / math.sqrt(fan_in)
    arguments = {"kernel_initializer": keras.initializers.RandomUniform(-bound, bound)}
    if use_bias:
        arguments["bias_initializer"] = keras.initializers.RandomUniform(-bound, bound)
    return arguments
