"""The library's modules under their 0.2.0 names, or under the names they had before.

The benchmarks time old and new commits in one run (`compare_commits.py`), so they import
the few modules that moved in 0.2.0 through `module(name)`, which falls back to the old path.
"""

from __future__ import annotations

import importlib

# 0.2.0 module -> its name before the 0.2.0 layout
BEFORE_0_2_0 = {
    "compgen_tf.experiments.config": "compgen_tf.config",
    "compgen_tf.experiments.scan": "compgen_tf.runs",
    "compgen_tf.experiments.episodes": "compgen_tf.meta_training",
    "compgen_tf.experiments.toy": "compgen_tf.toy_runs",
    "compgen_tf.training.data": "compgen_tf.data",
}


def module(name: str):
    """The module `name`, or the module it was before 0.2.0 on an older checkout."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if name not in BEFORE_0_2_0 or error.name not in (name, name.rpartition(".")[0]):
            raise
        return importlib.import_module(BEFORE_0_2_0[name])
