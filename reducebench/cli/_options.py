"""Options that several commands share, written once so that their names, defaults and
help read the same in every command."""

from __future__ import annotations

import click

from reducebench.measuring.rounds import DEFAULT_ROUNDS


def sampling_options(command):
    """Adds --seed, the stop rule's options (--min-samples, --max-noise, --max-time) and
    --rounds."""
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
        click.option("--rounds", default=DEFAULT_ROUNDS, show_default=True, type=str,
                     metavar="N",
                     help="Measure each case in N rounds, interleaved with the other "
                          "cases, each with fresh buffers: what lets `compare` tell a "
                          "change from run-to-run variation (docs/samples.md). The "
                          "sampling budget is shared out between the rounds."),
    )):
        command = option(command)
    return command
