"""The package's imports go down the layer order and close no cycle (issue 67, item 4).

Every `.py` file of `compgen_tf/` and `tfds_scan/` is parsed with `ast`, without importing
anything: every `import` counts, also those inside functions and classes (where an import
cycle hides best), and so do the module names given to `importlib.import_module` and
`compgen_tf.lazy.lazy_attributes` (imports made later, by name). The test fails, naming the
modules, the file and the line, on

- an import cycle between modules, at any depth (a strongly connected component);
- an import from a lower layer to a higher one (`LAYERS`, lowest first);
- `tfds_scan` importing `compgen_tf` (the datasets stand on their own);
- a module outside the command line importing the root package `compgen_tf` itself (its
  `__init__` is the top: the version is `compgen_tf.versions.__version__`);
- an `argparse` front end outside `compgen_tf.cli` (every `main` lives there);
- a file descriptor redirected outside `compgen_tf.cli` (`os.dup2`: a library import must
  leave the host process's streams alone; hiding TensorFlow's start-up lines is the
  command line's business).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("compgen_tf", "tfds_scan")

# The layers, lowest first. A module may import modules of its own layer or of a lower one,
# never of a higher one. A module belongs to the entry that names it or the package it is
# in (the longest such name); every module of `compgen_tf` must be placed here, so that a new
# top-level module is a decision, not an accident. Within a layer imports go either way
# (within a subpackage, between the base modules, between `analysis` and `reporting`), but
# never round a cycle.
LAYERS = (
    ("datasets", ("tfds_scan",)),
    ("base", ("compgen_tf.arguments", "compgen_tf.decoding", "compgen_tf.errors",
              "compgen_tf.groups", "compgen_tf.keras_internals", "compgen_tf.lazy",
              "compgen_tf.names", "compgen_tf.resources", "compgen_tf.sections",
              "compgen_tf.tokens", "compgen_tf.versions")),
    ("layers", ("compgen_tf.layers",)),
    ("models", ("compgen_tf.models",)),
    ("training", ("compgen_tf.training",)),
    ("registry", ("compgen_tf.registry",)),
    ("experiments", ("compgen_tf.experiments",)),
    ("analysis and reporting", ("compgen_tf.analysis", "compgen_tf.reporting")),
    ("command line", ("compgen_tf", "compgen_tf.__main__", "compgen_tf.cli",
                      "compgen_tf.train")),
)
COMMAND_LINE = "command line"

# Functions whose string arguments name modules imported later.
IMPORTS_BY_NAME = ("import_module", "lazy_attributes")


def module_files() -> dict[str, Path]:
    """Dotted module name -> file, for every module of `PACKAGES`."""
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _known(name: str, modules) -> str | None:
    """`name` or its longest prefix that is a module of `PACKAGES`; None outside them."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def _module_level_values(tree: ast.Module) -> dict[str, ast.AST]:
    values = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.value is not None:
            values[node.target.id] = node.value
    return values


def _strings(node: ast.AST, values: dict[str, ast.AST], seen=()) -> list[str]:
    """The string constants in `node`, following names bound at module level."""
    found = []
    for child in ast.walk(node):
        if isinstance(child, ast.Constant) and isinstance(child.value, str):
            found.append(child.value)
        elif isinstance(child, ast.Name) and child.id in values and child.id not in seen:
            found += _strings(values[child.id], values, (*seen, child.id))
    return found


def imports_of(name: str, path: Path, modules) -> list[tuple[str, int, str]]:
    """(imported module, line, how) for every import in module `name` of a module of
    `PACKAGES`; `how` is the statement as written, for the messages."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if _is_package(path) else name.rpartition(".")[0]
    values = _module_level_values(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _known(alias.name, modules)
                if target:
                    found.append((target, node.lineno, f"import {alias.name}"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
            written = "." * node.level + (node.module or "")
            names_of = {}  # target -> the names imported from it, in order
            for alias in node.names:
                # `from pkg import name` imports the module pkg.name if there is one, else pkg.
                target = (f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules
                          else _known(source, modules))
                if target:
                    names_of.setdefault(target, []).append(alias.name)
            found += [(target, node.lineno, f"from {written} import {', '.join(names)}")
                      for target, names in names_of.items()]
        elif isinstance(node, ast.Call):
            function = node.func
            called = (function.attr if isinstance(function, ast.Attribute)
                      else getattr(function, "id", None))
            if called in IMPORTS_BY_NAME:
                texts = [text for argument in node.args for text in _strings(argument, values)]
                found += [(text, node.lineno, f"{called}({text!r})")
                          for text in dict.fromkeys(texts) if text in modules]
    return [(target, line, how) for target, line, how in found if target != name]


def import_graph():
    modules = module_files()
    edges = {name: imports_of(name, path, modules) for name, path in modules.items()}
    return modules, edges


def layer_of(module: str) -> int | None:
    """The index in `LAYERS` of `module`, None when no entry places it."""
    best, best_length = None, -1
    for index, (_, names) in enumerate(LAYERS):
        for entry in names:
            if module == entry or (entry != "compgen_tf" and module.startswith(entry + ".")):
                if len(entry) > best_length:
                    best, best_length = index, len(entry)
    return best


def _shown(path: Path) -> str:
    """`path` from its top package on (compgen_tf/models/x.py), wherever the tree is."""
    parts = path.parts
    start = max(i for i, part in enumerate(parts) if part in PACKAGES)
    return "/".join(parts[start:])


def _where(modules, importer, line, how):
    return f"{_shown(modules[importer])}:{line} ({how})"


def strongly_connected_components(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative (no recursion limit on a deep chain)."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
    return components


def cycle_messages(modules, edges) -> list[str]:
    graph = {name: {target for target, _, _ in found} for name, found in edges.items()}
    messages = []
    for component in strongly_connected_components(graph):
        members = set(component)
        inside = [f"    {importer} -> {target}: {_where(modules, importer, line, how)}"
                  for importer in component for target, line, how in edges[importer]
                  if target in members]
        messages.append(f"import cycle among {', '.join(component)}:\n" + "\n".join(inside))
    return messages


def layer_messages(modules, edges) -> list[str]:
    messages = []
    for name in sorted(edges):
        level = layer_of(name)
        if level is None:
            if name.startswith("compgen_tf"):
                messages.append(f"{name} ({_shown(modules[name])}) is in no layer: "
                                "place it in LAYERS of tests/test_imports.py")
            continue
        for target, line, how in edges[name]:
            where = _where(modules, name, line, how)
            if name.startswith("tfds_scan") and target.startswith("compgen_tf"):
                messages.append(f"tfds_scan imports compgen_tf: {name} -> {target}: {where}")
                continue
            if target == "compgen_tf" and LAYERS[level][0] != COMMAND_LINE:
                messages.append(f"{name} imports the root package compgen_tf (use "
                                f"compgen_tf.versions for the version): {where}")
                continue
            target_level = layer_of(target)
            if target_level is not None and target_level > level:
                messages.append(f"upward import {name} ({LAYERS[level][0]}) -> {target} "
                                f"({LAYERS[target_level][0]}): {where}")
    return messages


def argparse_messages(modules) -> list[str]:
    messages = []
    for name, path in sorted(modules.items()):
        if (not name.startswith("compgen_tf.")
                or name == "compgen_tf.cli" or name.startswith("compgen_tf.cli.")):
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module] if isinstance(node, ast.ImportFrom) else [])
            if "argparse" in names:
                messages.append(f"{name} imports argparse: a command-line front end belongs "
                                f"in compgen_tf.cli ({_shown(path)}:{node.lineno})")
    return messages


def redirect_messages(modules) -> list[str]:
    messages = []
    for name, path in sorted(modules.items()):
        if name == "compgen_tf.cli" or name.startswith("compgen_tf.cli."):
            continue
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "dup2" or (
                    isinstance(node, ast.alias) and node.name == "dup2"):
                messages.append(f"{name} redirects a file descriptor (dup2) outside "
                                f"compgen_tf.cli ({_shown(path)}:{getattr(node, 'lineno', '?')})")
    return messages


def _fail_on(messages):
    assert not messages, f"{len(messages)} problem(s):\n" + "\n".join(messages)


def test_the_graph_sees_imports_inside_functions_and_relative_ones():
    modules, edges = import_graph()
    # compgen_tf/models/preprocessor.py imports the token ids at the top; the registry
    # imports tfds_scan inside functions.
    assert "compgen_tf.tokens" in {t for t, _, _ in edges["compgen_tf.models.preprocessor"]}
    assert "tfds_scan" in {t for t, _, _ in edges["compgen_tf.registry"]}
    assert all(layer_of(name) is not None for name in modules if name.startswith("compgen_tf"))


def test_no_import_cycle():
    _fail_on(cycle_messages(*import_graph()))


def test_imports_go_down_the_layers():
    _fail_on(layer_messages(*import_graph()))


def test_every_argparse_front_end_is_in_cli():
    _fail_on(argparse_messages(module_files()))


def test_only_the_command_line_redirects_file_descriptors():
    _fail_on(redirect_messages(module_files()))


def test_a_planted_fault_is_named(tmp_path):
    """The checks see an upward import inside a function, a relative import that closes a
    cycle, an import of the root package and argparse outside cli (on synthetic files)."""
    files = {
        "compgen_tf/__init__.py": "",
        "compgen_tf/layers/__init__.py": "",
        "compgen_tf/layers/a.py": "def f():\n    from compgen_tf.experiments import b\n",
        "compgen_tf/experiments/__init__.py": "",
        "compgen_tf/experiments/b.py": "from . import c\nimport compgen_tf\n",
        "compgen_tf/experiments/c.py": "class C:\n    from .b import thing\nimport argparse\n",
        "compgen_tf/groups.py": "import os\nos.dup2(1, 2)\n",
    }
    for relative, text in files.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text(text)
    modules = {}
    for relative in files:
        parts = Path(relative).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = tmp_path / relative
    edges = {name: imports_of(name, path, modules) for name, path in modules.items()}
    cycles = cycle_messages(modules, edges)
    layers = layer_messages(modules, edges)
    argparse_found = argparse_messages(modules)
    redirects = redirect_messages(modules)
    assert len(cycles) == 1 and cycles[0].startswith(
        "import cycle among compgen_tf.experiments.b, compgen_tf.experiments.c:")
    assert "compgen_tf/experiments/c.py:2 (from .b import thing)" in cycles[0]
    assert layers == [
        "compgen_tf.experiments.b imports the root package compgen_tf (use "
        "compgen_tf.versions for the version): compgen_tf/experiments/b.py:2 "
        "(import compgen_tf)",
        "upward import compgen_tf.layers.a (layers) -> compgen_tf.experiments.b (experiments): "
        "compgen_tf/layers/a.py:2 (from compgen_tf.experiments import b)"]
    assert argparse_found == [
        "compgen_tf.experiments.c imports argparse: a command-line front end belongs in "
        "compgen_tf.cli (compgen_tf/experiments/c.py:3)"]
    assert redirects == ["compgen_tf.groups redirects a file descriptor (dup2) outside "
                         "compgen_tf.cli (compgen_tf/groups.py:2)"]
