"""The package's shape: no import cycles between modules, counting every import (at the
top, inside functions, under TYPE_CHECKING), and the layering of pyproject.toml's
import-linter contract, which `.ci/run` also checks with lint-imports."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "reducebench"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """Every reducebench module the file imports, wherever the import statement is."""
    found = set()
    package = module_name(path) if path.name == "__init__.py" else \
        module_name(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            submodules = [f"{base}.{alias.name}" for alias in node.names
                          if f"{base}.{alias.name}" in modules]
            names = submodules or [base]   # `from pkg import module` imports that module
        for name in names:
            if name in modules:
                found.add(name)
    return found


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(files)
    return {m: imports_of(p, modules) - {m} for m, p in files.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            visit(v)
    return found


def test_cycle_finder_finds_a_planted_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_back_through_others():
    assert cycles(graph()) == []


def test_no_cli_command_module_imports_another():
    edges = graph()
    commands = {m for m in edges if m.startswith("reducebench.cli.")
                and not m.rpartition(".")[2].startswith("_")}
    for module in commands:
        assert not (edges[module] & commands), (module, edges[module] & commands)


def test_the_layers_contract_lists_every_package():
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = config["contracts"][0]["layers"]
    named = {name.strip() for layer in layers for name in layer.split("|")}
    packages = {f"reducebench.{p.name}" for p in PACKAGE.iterdir()
                if (p / "__init__.py").exists()} | {"reducebench.api"}
    assert packages <= named, packages - named


def test_lint_imports_keeps_the_contract():
    if subprocess.run([sys.executable, "-c", "import importlinter"]).returncode:
        pytest.skip("import-linter is not installed (`pip install import-linter`)")
    done = subprocess.run([sys.executable, "-m", "importlinter.cli"], cwd=REPO,
                          capture_output=True, text=True)
    if "No module named importlinter.cli" in done.stderr:
        done = subprocess.run(["lint-imports"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
