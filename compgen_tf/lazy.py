"""Attributes a package exports but imports only on first use (PEP 562).

The backbones and layers need only Keras, on any backend; the task models, the data and
the training need TensorFlow. A package that exports both imports the first at once and
the second through `lazy_attributes`, so that it imports in a process without TensorFlow
(JAX on a GPU machine, say) and a missing TensorFlow is reported where it is needed.
"""

from __future__ import annotations

import importlib


def lazy_attributes(package: str, modules: dict[str, str]):
    """A module-level `__getattr__` for `package` that imports `modules[name]` for `name`."""

    def __getattr__(name):
        if name in modules:
            return getattr(importlib.import_module(modules[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
