"""`reducebench ARGS` in the test's own process, through click's CliRunner: one helper for
every test file that drives a command."""

from click.testing import CliRunner, Result

from reducebench.cli import cli


def invoke(*args, width: int | None = None) -> Result:
    """The command line `args` (each made text), its output kept apart as stdout and
    stderr; `width` sets COLUMNS, the terminal width the tables are drawn for."""
    env = {"COLUMNS": str(width)} if width is not None else None
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)
