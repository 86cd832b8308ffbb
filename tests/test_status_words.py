"""Status words live in one place, results/schema.py (OK, SUSPECT, FAIL, ERROR, SKIPPED):
a module that compares a status against a string literal ("ok", "FAIL") would go on
comparing against the old word if a status were ever renamed, and nothing would say so."""

import ast
from pathlib import Path

from reducebench.results.schema import STATUSES

PACKAGE = Path(__file__).resolve().parent.parent / "reducebench"

def _status_literals(node: ast.AST) -> list[str]:
    """The status words written as literals in one operand: a string, or a tuple, list or
    set of strings."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and i.value in STATUSES]


def _about_status(source: str, node: ast.AST) -> bool:
    return "status" in (ast.get_source_segment(source, node) or "").lower()


def _names_a_status(target: ast.AST) -> bool:
    """An assignment's target that holds a status: `status`, `r.new_status`, `df["status"]`
    (not `status_header`, a column's title)."""
    if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
        name = str(target.slice.value)
    else:
        name = getattr(target, "id", getattr(target, "attr", ""))
    return name.lower().endswith("status")


def _pairs(node: ast.AST):
    """(the thing about a status, the operand that may be a literal word) of a node that
    compares, assigns or passes a status; nothing for any other node."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        for (a, op, b) in zip(operands, node.ops, operands[1:]):
            if isinstance(op, (ast.In, ast.NotIn)):
                yield b, a      # "error" in box: a key of a box, unless the box is a status
                yield a, b
            else:
                yield None, a   # s != "ok": an equality with a status word is about a status
                yield None, b
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        for arg in node.args:   # frame["status"].isin([...]), .fillna("ok")
            yield node.func.value, arg
    elif isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                pairs = zip(target.elts, node.value.elts)
            else:
                pairs = [(target, node.value)] if node.value is not None else []
            # a target that is not a status: compared as an empty expression, never "about"
            yield from ((t if _names_a_status(t) else ast.Constant(""), v) for t, v in pairs)


def literal_status_words(source: str) -> list[tuple[int, str]]:
    """(line, the statement's text) for every comparison, assignment or method call that
    writes a status word as a literal where it is about a status."""
    found = []
    for node in ast.walk(ast.parse(source)):
        for subject, operand in _pairs(node):
            if _status_literals(operand) and (subject is None or _about_status(source, subject)):
                found.append((node.lineno, ast.get_source_segment(source, node)))
                break
    return sorted(found)


def test_the_scan_finds_each_way_of_writing_a_literal_status():
    planted = '\n'.join([
        'a = record.status == "ok"',
        'b = "FAIL" != r.status',
        'c = status_of(row) in ("error", "skipped")',
        'd = frame["status"] == "suspect"',
        'e = rows["new_status"].isin(["ok"])',
        'record.status, record.error = "error", "why"',
        'status: str = "ok"',
        'df["status"] = df["status"].fillna("ok")',
        'bad = [s for s in statuses if s != "ok"]',
        'f = record.status == OK',            # the constant: fine
        'g = r.kind in ("ok", "x")',           # not a status: fine
        'h = r.status == "unknown"',          # not a status word: fine
        'i = "error" in box',                 # a key of a box: fine
        'box["error"] = exc',                 # the same
        'status_header = ("verified", "ok")',  # a column's title: fine
    ])
    assert [line for line, _ in literal_status_words(planted)] == [1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_no_status_is_compared_against_a_literal_word():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        found += [f"reducebench/{where}:{line}: {text}"
                  for line, text in literal_status_words(path.read_text())]
    assert found == [], "compare against results/schema.py's constants:\n" + "\n".join(found)
