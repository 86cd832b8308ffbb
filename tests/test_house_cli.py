"""The command line stays thin and its single sources stay single (issue 41): cli/ at
most 1,294 lines and no module of it over 150; no branching on --format outside
render/; the run lifecycle's pieces (the results folder, the closing lines, the exit
codes) written once; signal handlers installed in one module; every shared option
declared once, with its default in core/defaults.py, the one place that
reducebench.measure, RunSettings, StopRule and the CLI read. Read from the source, so
each limit is checked on a CPU."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "reducebench"
CLI = PACKAGE / "cli"

CLI_LINES_MAX = 1294   # half of the 2,588 lines cli/ had
MODULE_LINES_MAX = 150


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def sources(outside: str = "") -> dict[str, str]:
    """Every module of the package (but those under `outside`), by its path."""
    return {str(p.relative_to(PACKAGE)): p.read_text() for p in sorted(PACKAGE.rglob("*.py"))
            if not outside or not str(p.relative_to(PACKAGE)).startswith(outside)}


def occurrences(text: str, where: dict[str, str] | None = None) -> list[str]:
    where = sources() if where is None else where
    return [path for path, source in where.items() for _ in range(source.count(text))]


# ---- thin ------------------------------------------------------------------------------------

def test_the_cli_is_at_most_half_its_size():
    total = sum(lines(p) for p in CLI.glob("*.py"))
    assert total <= CLI_LINES_MAX, f"reducebench/cli/ is {total} lines"


@pytest.mark.parametrize("module", sorted(p.name for p in CLI.glob("*.py")))
def test_no_cli_module_is_over_150_lines(module):
    assert lines(CLI / module) <= MODULE_LINES_MAX


FORMAT_BRANCH = re.compile(
    r"""output_format\s*(==|!=|\bin\b)|(==|!=)\s*["'](json|csv|markdown|text|table)["']""")


def test_the_output_format_is_switched_on_only_in_render():
    branches = [(path, m.group(0)) for path, source in sources(outside="render").items()
                for m in FORMAT_BRANCH.finditer(source)]
    assert branches == []


def test_the_format_branch_finder_finds_a_planted_branch():
    assert FORMAT_BRANCH.search('if output_format == "json":')
    assert FORMAT_BRANCH.search('capture = fmt == "json"')
    assert FORMAT_BRANCH.search("if output_format in ('csv', 'json'):")
    assert not FORMAT_BRANCH.search('show(view, output_format, console)')


# ---- the run lifecycle, written once -----------------------------------------------------------

@pytest.mark.parametrize("text, most", [
    ("RESULTS_DIR.mkdir", 1),           # where results go: measuring/lifecycle.results_path
    ("case(s) saved in", 1),            # what is on disk: results/store.saved
    ("case(s) failed", 1),              # render/closing.py
    ("[yellow]interrupted[/]", 1),      # render/closing.py
    ("the CUDA context was lost[/]", 1),
    ("ctx.exit(INTERRUPTED_EXIT)", 0),  # the exit code comes from the Ending
    ("abandon_lost_context(", 2),       # its definition and cli/_console.end
])
def test_each_piece_of_the_lifecycle_is_written_once(text, most):
    found = occurrences(text)
    assert len(found) <= most, found


def test_commands_exit_through_their_ending():
    """A measuring command's own exit code is the Ending's, raised in one place."""
    exits = occurrences("INTERRUPTED_EXIT", sources(outside="measuring"))
    assert all(not path.startswith("cli") for path in exits), exits


# ---- one place for signals -------------------------------------------------------------------

def test_signal_handlers_are_installed_in_core_interrupt_only():
    assert set(occurrences("signal.signal(")) == {"core/interrupt.py"}
    assert occurrences("GRACE_S = ") == ["core/interrupt.py"]


# ---- each option declared once, its default in one place -----------------------------------------

SHARED = ("--size", "--dtype", "--rung", "--block", "--cold/--warm", "--inputs", "--device",
          "--seed", "--min-samples", "--max-noise", "--max-time", "--rounds", "--format",
          "--threshold", "-o")


@pytest.mark.parametrize("flag", SHARED)
def test_a_shared_option_is_declared_in_cli_options_only(flag):
    cli = {p.name: p.read_text() for p in CLI.glob("*.py")}
    declared = [name for name, source in cli.items()
                if re.search(rf"""\(\s*["']{re.escape(flag)}["']""", source)]
    assert declared == ["_options.py"]


def test_every_command_that_takes_size_dtype_or_block_has_the_shared_help():
    from reducebench.cli import cli
    from reducebench.cli._options import OPTIONS

    takers = {}
    for name, command in cli.commands.items():
        for param in getattr(command, "params", ()):
            if param.name in ("size", "dtype", "block"):
                takers.setdefault(param.name, []).append(name)
    assert set(takers["size"]) >= {"run", "check", "sanitize", "multigpu", "explain"}
    assert set(takers["dtype"]) >= {"run", "check", "sanitize", "multigpu", "explain"}
    assert set(takers["block"]) >= {"run", "check", "sanitize", "multigpu"}
    assert OPTIONS["size"][0] == ("--size",)


def test_defaults_live_in_core_defaults_and_every_reader_agrees():
    from reducebench import api
    from reducebench.cli import cli
    from reducebench.core import defaults
    from reducebench.core.stats import StopRule
    from reducebench.measuring.settings import RunSettings

    settings, stop = RunSettings(), StopRule()
    assert settings.sizes == [defaults.SIZE] and settings.blocks == [defaults.BLOCK]
    assert [d.name for d in settings.dtypes] == [defaults.DTYPE]
    assert settings.inputs == defaults.INPUTS and settings.cold == defaults.COLD
    assert settings.rounds == defaults.ROUNDS and settings.timing == defaults.TIMING
    assert (stop.min_samples, stop.max_time) == (defaults.MIN_SAMPLES, defaults.MAX_TIME_S)
    assert stop.max_noise * 100 == pytest.approx(defaults.MAX_NOISE_PCT)
    measure = inspect.signature(api.measure).parameters
    assert measure["size"].default == defaults.SIZE
    assert measure["dtype"].default == defaults.DTYPE
    assert measure["block"].default == defaults.BLOCK
    assert measure["rounds"].default == defaults.ROUNDS
    assert measure["min_samples"].default == defaults.MIN_SAMPLES
    assert measure["max_noise_pct"].default == defaults.MAX_NOISE_PCT
    assert measure["max_time"].default == defaults.MAX_TIME_S
    run = {p.name: p.default for p in cli.commands["run"].params}
    assert run["size"] == "2^24" and run["dtype"] == defaults.DTYPE
    assert run["block"] == str(defaults.BLOCK) and int(run["rounds"]) == defaults.ROUNDS
    assert (run["min_samples"], run["max_noise"], run["max_time"]) == (
        defaults.MIN_SAMPLES, defaults.MAX_NOISE_PCT, defaults.MAX_TIME_S)


def test_no_config_file_repeats_the_defaults():
    """configs/ holds example sweeps; what `run` does with no options is core/defaults.py."""
    assert not (REPO / "configs" / "default.toml").exists()


# ---- printers without CliRunner ----------------------------------------------------------------

def test_a_view_prints_each_form_through_the_one_switch(capsys):
    import io

    from rich.console import Console

    from reducebench.render.printers import View, show

    view = View({"table": lambda: ["a line on the console"],
                 "json": lambda: '{"a": 1}\n'}, warnings=["said on stderr"])
    out = io.StringIO()
    show(view, "table", Console(file=out, width=80))
    assert out.getvalue() == "a line on the console\n"
    show(view, "json")
    captured = capsys.readouterr()
    assert captured.out == '{"a": 1}\n' and captured.err == "warning: said on stderr\n"
