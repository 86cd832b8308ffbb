"""`reducebench ARGS` in the test's own process, through click's CliRunner: one helper for
every test file that drives a command."""

from click.testing import CliRunner, Result

from reducebench.cli import cli


def invoke(*args, width: int | None = None) -> Result:
    """The command line `args` (each made text), its output kept apart as stdout and
    stderr; `width` sets COLUMNS, the terminal width the tables are drawn for."""
    env = {"COLUMNS": str(width)} if width is not None else None
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def one_error_line(result: Result, *fragments: str) -> str:
    """The one line of a refused command, checked: exit code 2, no traceback, a single
    line on stderr that starts `reducebench: error: ` and holds every fragment."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("reducebench: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]
