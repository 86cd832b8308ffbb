"""A module's file name says what it holds: no name stands in two packages of reducebench/,
except a cli/ module named after the command it implements (cli/explain.py is
`reducebench explain`), whose folder makes its role plain."""

from collections import defaultdict
from pathlib import Path

from reducebench.cli import cli

PACKAGE = Path(__file__).resolve().parent.parent / "reducebench"


def repeated_names(modules: list[str], commands: set[str]) -> dict[str, list[str]]:
    """Base names that stand in more than one folder, with their paths (relative to
    reducebench/); a package's __init__.py and a cli/ command's module do not count."""
    where = defaultdict(list)
    for path in modules:
        folder, _, name = path.rpartition("/")
        if name == "__init__.py":
            continue
        if folder == "cli" and name.removesuffix(".py").replace("_", "-") in commands:
            continue
        where[name].append(path)
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_no_module_name_repeats_across_packages():
    modules = [p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")]
    assert repeated_names(modules, set(cli.commands)) == {}


def test_the_scan_allows_only_a_cli_module_named_after_its_command():
    modules = ["cli/explain.py", "analysis/explain.py", "cli/show_samples.py",
               "results/show_samples.py", "cli/_console.py", "render/_console.py",
               "device/backend.py", "measuring/backend.py", "core/__init__.py",
               "verify/__init__.py", "render/tables.py", "render/html/tables.py"]
    assert repeated_names(modules, {"explain", "show-samples"}) == {
        "_console.py": ["cli/_console.py", "render/_console.py"],
        "backend.py": ["device/backend.py", "measuring/backend.py"],
        "tables.py": ["render/tables.py", "render/html/tables.py"],
    }
