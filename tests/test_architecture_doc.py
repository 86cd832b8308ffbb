"""docs/architecture.md's claims that a program can check: the table of layers is
pyproject.toml's import-linter contract, only device/ imports CuPy, the packages on one
line do not import each other, which packages read files, and which draw."""

import ast
import re
from pathlib import Path

import pytest

from test_layering import graph

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "reducebench"
DOC = (REPO / "docs" / "architecture.md").read_text()


def modules() -> dict[str, ast.Module]:
    """Every module of the package by its path under reducebench/, parsed."""
    return {p.relative_to(PACKAGE).as_posix(): ast.parse(p.read_text())
            for p in sorted(PACKAGE.rglob("*.py"))}


def imported_roots(tree: ast.Module) -> set[str]:
    """The top-level names of every package a module imports, wherever the import is."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "import_module" \
                and node.args and isinstance(node.args[0], ast.Constant):
            found.add(str(node.args[0].value).split(".")[0])
    return found


def package_of(where: str) -> str:
    """api.py, or the package a module is in: `render/html/page.py` -> render."""
    return where.split("/")[0].removesuffix(".py")


def doc_layers() -> list[list[str]]:
    """The table of layers: the packages of each row, top to bottom."""
    rows = re.findall(r"^\| (\d+) \| (.+?) \|", DOC, flags=re.M)
    assert [int(n) for n, _ in rows] == list(range(1, len(rows) + 1)), rows
    return [sorted(re.findall(r"`(\w+)(?:/|\.py)`", names)) for _, names in rows]


def test_the_table_of_layers_is_the_import_linter_contract():
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = [sorted(name.strip().removeprefix("reducebench.") for name in layer.split("|"))
                for layer in config["contracts"][0]["layers"]]
    assert doc_layers() == contract


def test_packages_on_one_line_do_not_import_each_other():
    edges = graph()
    for line in doc_layers():
        for package in line:
            reached = {target.split(".")[1] for source, targets in edges.items()
                       if source.split(".")[1:2] == [package] for target in targets}
            assert not reached & (set(line) - {package}), (package, reached & set(line))


CUPY = {"cupy", "cupyx", "cupy_backends"}


def test_only_the_device_package_imports_cupy():
    assert "Only `device/` imports CuPy" in DOC
    importers = {where for where, tree in modules().items() if imported_roots(tree) & CUPY}
    assert importers and all(where.startswith("device/") for where in importers), importers


def test_the_cupy_scan_sees_an_import_inside_a_function():
    tree = ast.parse("def f():\n    import cupyx.scipy\n    return importlib.import_module('cupy')")
    assert imported_roots(tree) == {"cupyx", "cupy"}


# ---- who reads files, who draws ---------------------------------------------------------

READS = ("open", "read_text", "read_bytes", "read_csv", "read_table", "loadtxt")
LOADERS = ("np", "numpy", "json", "tomllib", "pickle")   # their load(f) reads a file


def file_reads(tree: ast.Module) -> list[int]:
    """Lines that read a file: open(), Path.read_text/read_bytes, pandas' read_csv,
    tomllib/json/numpy/pickle load (not Triton's tl.load, which reads device memory)."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", "")
            receiver = getattr(getattr(node.func, "value", None), "id", "")
            if name in READS or (name == "load" and receiver in LOADERS):
                lines.append(node.lineno)
    return lines


# The sentence of docs/architecture.md that names every module that reads a file itself.
READERS_SENTENCE = re.compile(r"Files are read in (.+?)\.\s*\n\s*\n", re.S)


def test_the_modules_that_read_files_are_the_ones_the_document_names():
    sentence = READERS_SENTENCE.search(DOC)
    assert sentence, "architecture.md: the sentence `Files are read in ...` is missing"
    named = re.findall(r"`(\w+/(?:\w+\.py)?)`", sentence.group(1))
    readers = {where for where, tree in modules().items() if file_reads(tree)}
    unnamed = {w for w in readers if not any(w == n or (n.endswith("/") and w.startswith(n))
                                              for n in named)}
    assert not unnamed, f"read files, not named in architecture.md: {sorted(unnamed)}"
    idle = {n for n in named if not any(w == n or (n.endswith("/") and w.startswith(n))
                                        for w in readers)}
    assert not idle, f"named in architecture.md, read no file: {sorted(idle)}"


def test_results_files_are_parsed_only_in_the_results_package():
    for where, tree in modules().items():
        parses = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and getattr(node.func, "attr", "") == "read_csv"]
        assert not parses or where.startswith("results/"), (where, parses)


DRAWING = {"rich", "matplotlib", "plotly", "jinja2"}


def test_only_render_and_cli_draw():
    assert "rich, matplotlib, plotly and jinja2 are imported only in `render/` and `cli/`" \
        in " ".join(DOC.split())
    drawers = {package_of(where) for where, tree in modules().items()
               if imported_roots(tree) & DRAWING}
    assert drawers == {"render", "cli"}, drawers


def test_the_file_scan_sees_each_way_of_reading():
    tree = ast.parse("open(p)\nPath(p).read_text()\npd.read_csv(p)\ntomllib.load(f)\n"
                     "np.load(p)\ntl.load(ptr)\ntomllib.loads(text)")
    assert sorted(file_reads(tree)) == [1, 2, 3, 4, 5]


# ---- every module has its place in "Where each concern lives" ---------------------------

def concern_paragraphs() -> dict[str, str]:
    """The text that follows each `**package/**:` of the section, up to the next one."""
    section = DOC.split("## Where each concern lives", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"\*\*(\w+)/\*\*:", section)
    return {name: text for name, text in zip(parts[1::2], parts[2::2])}


def test_every_module_is_named_where_its_package_is_described():
    paragraphs = concern_paragraphs()
    unnamed = []
    for where in modules():
        package, _, rest = where.partition("/")
        name = where.rpartition("/")[2]
        if name == "__init__.py":
            continue    # a package's own: the package is named by its folder
        if not rest:    # api.py, __main__.py: named with their path
            assert f"`{where}`" in DOC or f"reducebench/{where}" in DOC, where
        elif f"`{name}`" not in paragraphs.get(package, ""):
            unnamed.append(where)
    assert unnamed == [], f"architecture.md does not say what these hold: {unnamed}"
