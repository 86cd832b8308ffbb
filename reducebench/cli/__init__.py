"""The command line: parse, call the core, render. Nothing here measures or decides."""

from __future__ import annotations

import sys
import warnings

import click

from reducebench.core.version import __version__
from reducebench.core.errors import ReducebenchError
from reducebench.results.files import ResultsWarning


class ReducebenchGroup(click.Group):
    """Turns the core's errors into one clear line and their exit code."""

    def invoke(self, ctx: click.Context):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("always", ResultsWarning)  # each file says it once
                warnings.showwarning = _one_line_warnings
                return super().invoke(ctx)
        except ReducebenchError as exc:
            click.echo(f"reducebench: error: {exc}", err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=ReducebenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="reducebench")
def cli() -> None:
    """Compile, verify and time the CUDA sum-reduction ladder next to CUB."""


def _register() -> None:
    """Every command module, named here: a missing one is an ImportError at start-up,
    never a command that silently disappears from the CLI."""
    from reducebench.cli import (catalog, check, compare, explain, info, multigpu, plot,
                                 report, run, samples, sanitize, shfl, tune)

    for module in (run, catalog, info, check, compare, plot, shfl, sanitize, explain,
                   samples, multigpu, tune, report):
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
