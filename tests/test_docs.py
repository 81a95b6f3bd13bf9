"""The docs: the API reference refuses a public name without a docstring (tools/api_docs.py,
`make docs`), and every relative link of the repository's Markdown files resolves."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from urllib.parse import unquote

import pytest

REPO = Path(__file__).resolve().parents[1]
API_DOCS = REPO / "tools" / "api_docs.py"


def _run_api_docs(*args, path=None):
    # The tool imports the packages it documents as installed; a synthetic one is found
    # through PYTHONPATH, as an installed one would be.
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    if path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(path), env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, str(API_DOCS), *args], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=600)


def _write_package(root: Path, files: dict) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


DOCUMENTED = {
    "fakepkg/__init__.py": '''\
        """A package."""
        from fakepkg.shapes import Square
        from otherlib import Foreign  # re-exported from another library: not checked

        __all__ = ["Square", "SIZES", "Foreign"]
        SIZES = (1, 2)  # a constant: described by the module docstring
        ''',
    "fakepkg/shapes.py": '''\
        """Shapes."""

        class Base:
            """A base."""

            def area(self):
                """The area."""

            def hook(self):
                """A hook."""

        class Square(Base):
            """A square."""

            def area(self):  # an override: documented by Base.area
                return 1

            def hook(self):  # an override too
                return 2

            @property
            def side(self):
                """The side."""
                return 1

            def _private(self):
                pass
        ''',
    "fakepkg/_hidden.py": "def nothing():\n    pass\n",
    "otherlib/__init__.py": "class Foreign:\n    def method(self):\n        pass\n",
    "fakepkg/__main__.py": "raise SystemExit('importing __main__ would run the command line')\n",
}


def test_api_docs_lists_every_public_name_without_a_docstring(tmp_path):
    undocumented = dict(DOCUMENTED)
    undocumented["fakepkg/tools.py"] = '''\
        import json

        def helper(x):
            return x

        def _private_helper(x):
            return x

        class Thing:
            """A thing."""

            def method(self):
                return 1

            @classmethod
            def make(cls):
                return cls()

            @staticmethod
            def static():
                return 0

            @property
            def value(self):
                return 1

            def documented(self):
                """Documented."""
        '''
    undocumented["fakepkg/sub/__init__.py"] = (
        "__all__ = ['Undocumented']\nclass Undocumented:\n    pass\n")
    _write_package(tmp_path, undocumented)
    result = _run_api_docs("--check", "fakepkg", path=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        "fakepkg.sub",
        "fakepkg.sub.Undocumented",
        "fakepkg.tools",
        "fakepkg.tools.helper",
        "fakepkg.tools.Thing.method",
        "fakepkg.tools.Thing.make",
        "fakepkg.tools.Thing.static",
        "fakepkg.tools.Thing.value",
    ]
    assert result.stderr.splitlines()[-1] == "8 public name(s) without a docstring"
    # Refused: nothing is written.
    refused = _run_api_docs("--out", str(tmp_path / "html"), "fakepkg", path=tmp_path)
    assert refused.returncode == 1 and not (tmp_path / "html").exists()


def test_api_docs_passes_a_documented_package_and_writes_its_reference(tmp_path):
    _write_package(tmp_path, DOCUMENTED)
    result = _run_api_docs("--check", "fakepkg", path=tmp_path)
    assert (result.returncode, result.stdout) == (0, ""), result.stderr
    pytest.importorskip("pdoc")  # the `docs` extra, which `make install` installs
    out = tmp_path / "html"
    result = _run_api_docs("--out", str(out), "fakepkg", path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"wrote 3 page(s) of API reference to {out}"
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*.html")) == [
        "fakepkg.html", "fakepkg/shapes.html", "index.html"]
    shapes = (out / "fakepkg" / "shapes.html").read_text()
    assert "A square." in shapes and "The side." in shapes


def test_api_docs_reports_a_package_that_does_not_import():
    result = _run_api_docs("--check", "no_such_package_here")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: cannot import no_such_package_here: No module named 'no_such_package_here'"]


def test_every_public_name_of_the_packages_has_a_docstring():
    result = _run_api_docs("--check", "compgen_tf", "tfds_scan")
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


# ---------------------------------------------------------------- links of the Markdown files

SKIPPED_DIRS = {".venv", "build", "dist", "runs", "node_modules", "__pycache__"}
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)
ANCHOR_TAG = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:", re.IGNORECASE)  # http:, https:, mailto:


def markdown_files(root: Path) -> list[Path]:
    """The repository's *.md files, outside environments, build outputs and hidden folders."""
    return sorted(path for path in root.rglob("*.md")
                  if not any(part in SKIPPED_DIRS or part.startswith(".")
                             for part in path.relative_to(root).parts[:-1]))


def _without_code(text: str) -> str:
    # Links in fenced code blocks and inline code are examples, not links.
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.DOTALL | re.MULTILINE)
    return re.sub(r"`[^`\n]*`", "", text)


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives the headings of `text` (and its <a id/name> tags)."""
    anchors, seen = set(ANCHOR_TAG.findall(text)), {}
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.DOTALL | re.MULTILINE)
    for match in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, flags=re.MULTILINE):
        title = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1))  # a link: its text
        title = re.sub(r"<[^>]+>", "", title).replace("`", "")
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def broken_links(path: Path, root: Path) -> list[str]:
    """The relative links of the Markdown file `path` whose file, folder or heading does not
    exist, as "path: target"."""
    text = path.read_text()
    body = _without_code(text)
    broken = []
    for target in LINK.findall(body) + REFERENCE.findall(body):
        if EXTERNAL.match(target):
            continue
        file_part, _, anchor = unquote(target).partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{path.relative_to(root)}: {target}")
        elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(
                linked.read_text()):
            broken.append(f"{path.relative_to(root)}: {target} (no such heading)")
    return broken


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text(
        "# A page: its title\n\n## Same\n\n## Same\n\n## `code` and [a link](x.md)\n")
    (tmp_path / "README.md").write_text(
        "[ok](docs/page.md) [ok](docs/page.md#a-page-its-title) [ok](docs/page.md#same-1)\n"
        "[ok](docs/page.md#code-and-a-link) [ok](docs/) [ok](#top) ![img](docs/page.md)\n"
        "[web](https://example.org/x.md) `[code](missing.md)`\n\n<a id=\"top\"></a>\n"
        "```\n[fenced](missing.md)\n```\n"
        "[gone](docs/missing.md) [no heading](docs/page.md#nowhere) [ref]\n\n"
        "[ref]: docs/also_missing.md\n")
    assert broken_links(tmp_path / "README.md", tmp_path) == [
        "README.md: docs/missing.md",
        "README.md: docs/page.md#nowhere (no such heading)",
        "README.md: docs/also_missing.md",
    ]


def test_every_relative_link_in_the_markdown_files_resolves():
    files = markdown_files(REPO)
    assert REPO / "docs" / "index.md" in files and REPO / "README.md" in files
    broken = [line for path in files for line in broken_links(path, REPO)]
    assert broken == [], "\n".join(broken)
