"""Options that several commands share, written once so that their names, defaults and
help read the same in every command."""

from __future__ import annotations

import click


def sampling_options(command):
    """Adds --seed and the stop rule's options (--min-samples, --max-noise, --max-time)."""
    for option in reversed((
        click.option("--seed", default=None, type=int,
                     help="Input seed (default: random, recorded in the CSV)."),
        click.option("--min-samples", default=10, show_default=True, type=int,
                     help="Timed samples per case at least."),
        click.option("--max-noise", default=0.5, show_default=True, type=float, metavar="PCT",
                     help="Stop sampling once the noise (stdev/mean, in percent) is below "
                          "this."),
        click.option("--max-time", default=0.5, show_default=True, type=float,
                     metavar="SECONDS", help="Seconds of sampling per case at most."),
    )):
        command = option(command)
    return command
