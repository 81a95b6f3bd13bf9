"""`LocalCodePath`: the `code_path` every builder of this package needs under TFDS 4.9.10."""

from __future__ import annotations

import sys

import tensorflow_datasets as tfds
from etils import epath


class LocalCodePath:
    """Mixin, listed before `tfds.core.GeneratorBasedBuilder`: `code_path` is the file that
    defines the builder class.

    TFDS 4.9.10's own lookup touches the `importlib_resources` backport, which it only
    declares for Python < 3.9, so `download_and_prepare` fails without it. This is the value
    that lookup would return.
    """

    @tfds.core.utils.classproperty
    @classmethod
    def code_path(cls) -> epath.Path:
        """The source file of the module that defines `cls` (what TFDS would look up)."""
        return epath.Path(sys.modules[cls.__module__].__file__)
