"""Versions of the packages that produced a result, recorded beside every number."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

# The library's version (also `compgen_tf.__version__`; pyproject.toml declares the same).
__version__ = "0.2.0"
_PACKAGES = ("tensorflow-cpu", "tensorflow", "keras", "tensorflow-datasets",
             "keras-tuner", "numpy")


def package_versions() -> dict:
    """Python, platform and the installed versions of the library's main dependencies."""
    # The version of the source that runs, not of the installed metadata: an editable install
    # keeps the version it was installed with, and a checkout on PYTHONPATH has none.
    versions = {"python": sys.version.split()[0], "platform": platform.platform(),
                "compgen-tf": __version__}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    commit = source_commit()
    if commit:
        versions["commit"] = commit
    return versions


def checkout_root() -> Path | None:
    """The root of the git checkout whose tracked files this package runs from; None when
    the package's files are not tracked by git (an installed wheel, even one in a virtual
    environment inside a checkout) or git is not available."""
    package = Path(__file__).resolve().parent
    try:
        # Ask git whether this very file is tracked, and where that checkout's root is,
        # rather than guessing the root from the file's location.
        root = subprocess.run(["git", "-C", str(package), "rev-parse", "--show-toplevel"],
                              capture_output=True, text=True, timeout=10)
        tracked = subprocess.run(["git", "-C", str(package), "ls-files", "--error-unmatch",
                                  Path(__file__).name], capture_output=True, text=True,
                                 timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if root.returncode or tracked.returncode:
        return None
    return Path(root.stdout.strip())


def source_commit() -> str | None:
    """The git commit of the checkout this package runs from, with "+changes" when its
    tracked files differ from it; None when the package's files are not tracked by git
    (`checkout_root`)."""
    root = checkout_root()
    if root is None:
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10,
                              check=True).stdout.strip()
        changed = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                  "--untracked-files=no"], capture_output=True, text=True,
                                 timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+changes" if changed else "")
