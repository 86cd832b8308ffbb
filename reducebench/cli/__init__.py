"""The command line: parse, call the core, render. Nothing here measures or decides."""

from __future__ import annotations

import re
import sys
import warnings

import click

from reducebench.core.choices import did_you_mean
from reducebench.core.version import __version__
from reducebench.core.errors import ReducebenchError
from reducebench.results.files import ResultsWarning


# click raises this with the whole help as its message when a group is called bare
NO_ARGS_IS_HELP = getattr(click.exceptions, "NoArgsIsHelpError", ())


class ReducebenchGroup(click.Group):
    """Turns the core's errors, and click's errors in parsing a command line, into one
    clear line and their exit code."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:  # an option of `reducebench` itself
            if isinstance(exc, NO_ARGS_IS_HELP):  # bare `reducebench`: the help, as click does
                raise
            click.echo(f"reducebench: error: {usage_message(exc)}", err=True)
            ctx.exit(exc.exit_code)

    def invoke(self, ctx: click.Context):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always", ResultsWarning)  # each file says it once
                warnings.showwarning = _one_line_warnings
                return super().invoke(ctx)
        except ReducebenchError as exc:
            click.echo(f"reducebench: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except click.UsageError as exc:
            # click's own parsing errors (an unknown command or option, a missing or bad
            # value) get the same one line as the core's, not a usage block
            click.echo(f"reducebench: error: {usage_message(exc, ctx)}", err=True)
            ctx.exit(exc.exit_code)


def usage_message(exc: click.UsageError, group: click.Context | None = None) -> str:
    """One line: what is wrong with the command line, and the help of the command it was
    for, which names that command (after "reducebench: error: ", a leading command name
    would say "reducebench" twice). An error click reports from the group's context
    while parsing a subcommand's options (a missing value) points to that subcommand."""
    where = exc.ctx if exc.ctx is not None else group
    command = where.command_path if where is not None else "reducebench"
    if where is group and group is not None and group.invoked_subcommand:
        command = f"{group.command_path} {group.invoked_subcommand}"
    message = " ".join(exc.format_message().split())
    unknown = re.match(r"No such command '(.*)'\.", message)
    if unknown and where is not None and isinstance(where.command, click.Group):
        # the same "did you mean" as an unknown rung or dtype (click's is case-sensitive)
        names = where.command.list_commands(where)
        message = f"unknown command {unknown[1]!r}{did_you_mean(unknown[1], names)}"
    return f"{message} (see `{command} --help`)"


@click.group(cls=ReducebenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="reducebench")
def cli() -> None:
    """Compile, verify and time the CUDA sum-reduction ladder next to CUB."""


def _register() -> None:
    """Every command module, named here: a missing one is an ImportError at start-up,
    never a command that silently disappears from the CLI."""
    from reducebench.cli import (calibrate, catalog, check, compare, explain, info,
                                 multigpu, plot, report, run, sanitize, show_samples, shfl,
                                 tune)

    for module in (run, catalog, info, check, compare, calibrate, plot, shfl, sanitize,
                   explain, show_samples, multigpu, tune, report):
        for command in module.COMMANDS:
            cli.add_command(command)


_register()


def _one_line_warnings(message, category, filename, lineno, file=None, line=None) -> None:
    """What a reader should know about a file (results.files.ResultsWarning) in one line,
    like an error; Python's own warnings as Python shows them."""
    if issubclass(category, ResultsWarning):
        click.echo(f"reducebench: warning: {message}", err=True)
    else:
        _show_warning(message, category, filename, lineno, file, line)


_show_warning = warnings.showwarning


def main() -> None:
    cli.main(prog_name="reducebench")


if __name__ == "__main__":
    sys.exit(main())
