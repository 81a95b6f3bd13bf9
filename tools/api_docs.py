"""The API reference, generated from the docstrings by pdoc; refused while a public name has none.

    python tools/api_docs.py --out build/docs [PACKAGE ...]   check, then write the HTML
    python tools/api_docs.py --check [PACKAGE ...]            only list the undocumented names

`make docs` runs the first. PACKAGE defaults to compgen_tf and tfds_scan. Every public name
without a docstring is printed, one a line, and the exit code is 1 (nothing is written); a
package that does not import gives one line on stderr and exit code 2. It imports the
installed packages (no path set-up): run it with the environment's Python. The build needs
nothing from the network.

What is public, as the API reference (pdoc) shows it:
- every module whose dotted name has no part starting with "_" (a package's `__init__` is the
  package itself), except `__main__`, which runs the command line when imported;
- in each module, the names in its `__all__`; without `__all__`, the classes and functions
  defined in that module whose names do not start with "_";
- in each public class, the functions, class and static methods and properties defined in
  that class whose names do not start with "_". One that overrides an attribute of a base
  class counts as documented: a contract is documented once, where it is first defined (the
  reference shows that docstring with the override), and the Keras hooks (`call`, `build`,
  `get_config`, `train_step`, ...) are documented by Keras, their arguments in the class
  docstring's "Call arguments", as keras-hub does.
Module-level constants cannot carry a docstring at run time: their module's docstring
describes them. An object listed in several `__all__`s is checked once, where it is defined.
A class or function that a module merely re-exports from outside the packages checked (its
`__module__` is in none of them, e.g. Keras' `DropoutRNNCell` in `compgen_tf.keras_internals`)
is not checked, nor are its members: its docstrings are its authors'.
"""

import argparse
import importlib
import inspect
import pkgutil
import sys
import warnings
from pathlib import Path

DEFAULT_PACKAGES = ("compgen_tf", "tfds_scan")


def _is_private(dotted_name: str) -> bool:
    return any(part.startswith("_") for part in dotted_name.split("."))


def public_modules(package_name: str) -> list:
    """The package and its public submodules (imported), sorted by name."""
    package = importlib.import_module(package_name)
    modules = [package]
    if hasattr(package, "__path__"):
        for info in pkgutil.walk_packages(package.__path__, prefix=package_name + "."):
            if _is_private(info.name.removeprefix(package_name + ".")):
                continue  # _private, and __main__ (importing it would run the command line)
            modules.append(importlib.import_module(info.name))
    return sorted(modules, key=lambda module: module.__name__)


def _own_doc(obj) -> str:
    # A class's own docstring only: inspect.getdoc would give a base class's (keras.layers.Layer).
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    return doc.strip() if isinstance(doc, str) else ""


def _function_of(attribute):
    """The documentable object behind a class attribute, or None for plain values."""
    if isinstance(attribute, (staticmethod, classmethod)):
        return attribute.__func__
    if isinstance(attribute, property):
        return attribute
    if inspect.isfunction(attribute) or inspect.isclass(attribute):
        return attribute
    return None


def _member_documented(cls, name: str, attribute) -> bool:
    # An override is documented where the attribute is first defined (see the module docstring).
    return bool(_own_doc(_function_of(attribute))) or any(
        name in vars(base) for base in cls.__mro__[1:])


def _in_packages(module_name, package_names) -> bool:
    return any(module_name == package or module_name.startswith(package + ".")
               for package in package_names)


def _module_members(module):
    names = getattr(module, "__all__", None)
    if names is not None:
        for name in names:
            yield name, getattr(module, name)
        return
    for name, value in vars(module).items():
        if (not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))
                and getattr(value, "__module__", None) == module.__name__):
            yield name, value


def missing_docstrings(package_names) -> list[str]:
    """The dotted names of the public modules, classes, functions, methods and properties of
    `package_names` that have no docstring, in the order found."""
    missing, seen = [], set()
    for package_name in package_names:
        for module in public_modules(package_name):
            if not _own_doc(module):
                missing.append(module.__name__)
            for name, value in _module_members(module):
                if not (inspect.isclass(value) or inspect.isfunction(value)):
                    continue  # constants (see the module docstring) and re-exported modules
                if not _in_packages(getattr(value, "__module__", None) or "", package_names):
                    continue  # re-exported from another library (see the module docstring)
                if id(value) in seen:
                    continue
                seen.add(id(value))
                where = f"{getattr(value, '__module__', module.__name__)}.{value.__qualname__}"
                if not _own_doc(value):
                    missing.append(where)
                if inspect.isclass(value):
                    for member, attribute in vars(value).items():
                        if (member.startswith("_") or _function_of(attribute) is None
                                or _member_documented(value, member, attribute)):
                            continue
                        missing.append(f"{where}.{member}")
    return missing


def build(package_names, out: Path) -> list[Path]:
    """Writes the HTML reference of every public module of `package_names` into `out`;
    returns the pages written."""
    import pdoc  # the `docs` extra; only the build needs it, not the check

    modules = [module for name in package_names for module in public_modules(name)]
    for module in modules:
        # pdoc reads a module's __dict__, which a lazy (PEP 562) export is not in until first
        # use: resolve them, so that the package page lists them too.
        for name in getattr(module, "__all__", ()):
            module.__dict__.setdefault(name, getattr(module, name))
    pdoc.render.configure(docformat="google", footer_text=" ".join(package_names))
    with warnings.catch_warnings():
        # Every public module is named, since pdoc follows a package's __all__, which lists no
        # submodule; where it also walks a package itself, it warns of the module named twice.
        warnings.filterwarnings("ignore", message="The module specification")
        # TFDS's own annotations (inherited by the builder configs) name types it never imports.
        warnings.filterwarnings("ignore", message="Error parsing type annotation .*VersionOrStr")
        pdoc.pdoc(*[module.__name__ for module in modules], output_directory=Path(out))
    return sorted(Path(out).rglob("*.html"))


def main(argv=None) -> int:
    """The command line (see the module docstring); returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("packages", nargs="*", default=list(DEFAULT_PACKAGES),
                        help="importable packages to document (default: %(default)s)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", type=Path, help="directory to write the HTML reference into")
    mode.add_argument("--check", action="store_true",
                      help="write nothing; list the public names without a docstring")
    args = parser.parse_args(argv)
    try:
        missing = missing_docstrings(args.packages)
    except ImportError as error:
        print(f"error: cannot import {error.name or 'a module'}: {error}", file=sys.stderr)
        return 2
    for name in missing:
        print(name)
    if missing:
        print(f"{len(missing)} public name(s) without a docstring", file=sys.stderr)
        return 1
    if args.out is not None:
        pages = build(args.packages, args.out)
        print(f"wrote {len(pages)} page(s) of API reference to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
