"""Checks of constructor arguments shared by the layers and models, so that the same mistake
gets the same message everywhere."""

from __future__ import annotations

import numbers


def positive_int(name: str, value) -> int:
    """`value` as an `int`; a `ValueError` naming `name` unless it is a whole number >= 1."""
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or int(value) != value or value < 1):
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def non_negative(name: str, value) -> float:
    """`value` as a `float`; a `ValueError` naming `name` unless it is a real number >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0.0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")
    return float(value)


def rate(name: str, value) -> float:
    """`value` as a `float`; a `ValueError` naming `name` unless it lies in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return float(value)
