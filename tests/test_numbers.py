"""core/numbers.py is the one number formatter: its behaviour, with values worked by
hand, and a scan of reducebench/ for a figure formatted anywhere else."""

import ast
import math
import re
from pathlib import Path

import numpy as np
import pytest

from reducebench.core.numbers import MISSING, number

PACKAGE = Path(__file__).resolve().parent.parent / "reducebench"


@pytest.mark.parametrize("value, fmt, unit, shown", [
    (27.5512, ".2f", " us", "27.55 us"),
    (0.8912, ".3f", "", "0.891"),
    (-4.04, "+.1f", "%", "-4.0%"),
    (12.0, "+.1f", "%", "+12.0%"),
    (2.0, "g", "%", "2%"),             # a threshold as the user gave it
    (0.5, "g", " s", "0.5 s"),
    (0.000123, ".2g", "", "0.00012"),
    (3.2e-05, ".2g", "", "3.2e-05"),
    (1e-05, ".4g", "", "1e-05"),
    (16777216, ",", "", "16,777,216"),           # an integer stays one: no ".0"
    (np.int64(1048576), ",", "", "1,048,576"),   # numpy's integers too
    (3350.4, ",.0f", " GB/s", "3,350 GB/s"),
    (2.5 * 2**30 / 2**30, ".2f", " GiB", "2.50 GiB"),
    ("31.84", ".2f", "", "31.84"),               # a CSV cell read as text
    (True, ".0f", "", "1"),                      # a bool is a number, not an integer's text
])
def test_a_figure_is_formatted_in_its_spec_with_its_unit(value, fmt, unit, shown):
    assert number(value, fmt, unit) == shown


@pytest.mark.parametrize("missing", [None, math.nan, np.nan, float("nan"), "", "n/a",
                                     "nan", object()])
def test_a_missing_figure_reads_the_same_everywhere(missing):
    assert MISSING == "-"
    assert number(missing, ".2f", " us") == "-"   # no unit after nothing
    assert number(missing, "+.1f", "%") == "-"


def test_the_html_name_is_the_same_formatter():
    from reducebench.render.html import cells

    assert cells.number is number
    assert cells.num_cell(None, ".2f").text == "-" and cells.num_cell("", ".1f").sort == ""
    assert cells.num_cell(31.844, ".2f").text == "31.84"


def test_explain_shows_a_missing_counter_as_every_table_does():
    from reducebench.analysis.ladder_steps import COUNTERS, format_value

    assert format_value(math.nan, next(iter(COUNTERS.values()))) == "-"


# ---- no figure formatted outside core/numbers.py ----------------------------------------

NUMERIC_SPEC = re.compile(r"^(.?[<>^=])?[+\- ]?#?0?\d*[,_]?(\.\d+)?[bdeEfFgGn%]?$")

# Text that is not shown as a figure but written for a program to read back.
NOT_FIGURES = {
    "core/numbers.py": "the formatter itself",
    "results/samples_file.py": "the samples file's cells (9 significant digits keep every bit)",
    "results/schema.py": "round medians as a results file's cell",
    "ladder/auto.py": "the tuning file's TOML values",
}

def _spec_text(spec: ast.AST) -> str | None:
    """A format spec as text, a nested field ({digits}) as 9; None when not a constant."""
    if isinstance(spec, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "9" for v in spec.values)
    return spec.value if isinstance(spec, ast.Constant) and isinstance(spec.value, str) else None


def inline_number_formats(source: str) -> list[tuple[int, str]]:
    """(line, spec) of every number format spec outside the formatter: `{x:.2f}` in an
    f-string, format(x, ".2f"), "{:.2f}".format(x). Hex (`x`) is a bit pattern or an
    address, not a figure; a bare width or alignment pads text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        specs = []
        if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
            specs = [_spec_text(node.format_spec)]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "format" \
                and len(node.args) == 2:
            specs = [_spec_text(node.args[1])]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "format" \
                and isinstance(node.func.value, ast.Constant):
            specs = re.findall(r"\{[^{}:]*:([^{}]*)\}", str(node.func.value.value))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            specs = re.findall(r"^\{[^{}:]*:([^{}]*)\}$", node.value.value)  # "{:.9g}"
        for spec in specs:
            if spec and NUMERIC_SPEC.match(spec) and re.search(r"[.,+%bdeEfFgGn]", spec) \
                    and not re.fullmatch(r"[<>^]?\d+", spec):
                found.append((node.lineno, spec))
    return sorted(found)


def test_the_scan_finds_each_way_of_formatting_a_number():
    planted = "\n".join([
        'a = f"{x:.2f} us"',
        'b = f"{100 * r:+.1f}%"',
        'c = format(x, ".3g")',
        'd = "{:.9g}".format(t)',
        'e = f"{n:,} samples"',
        'f = f"{v:.{digits}f}"',
        'T = "{:.4f}"',
        'g = f"{name:<12} {ptr:#x} {mask:08x}"',   # text padding, an address, bits: fine
        'h = f"{number(x, \'.2f\')} us"',          # the formatter: fine
        'i = "%{customdata[1]:.2f}"',               # a plotly template, drawn by the browser
    ])
    assert [line for line, _ in inline_number_formats(planted)] == [1, 2, 3, 4, 5, 6, 7]


def test_no_figure_is_formatted_outside_the_formatter():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        if where in NOT_FIGURES:
            continue
        for line, spec in inline_number_formats(path.read_text()):
            found.append(f"reducebench/{where}:{line}: {spec}")
    assert found == [], "format through reducebench/core/numbers.py:\n" + "\n".join(found)
