"""Versions of the packages that produced a result, recorded beside every number."""

from __future__ import annotations

import platform
import sys
from importlib import metadata

_PACKAGES = ("compgen-tf", "tensorflow-cpu", "tensorflow", "keras", "tensorflow-datasets",
             "keras-tuner", "numpy")


def package_versions() -> dict:
    """Python, platform and the installed versions of the library's main dependencies."""
    versions = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return versions
