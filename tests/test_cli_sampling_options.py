"""`run` and `multigpu` sample alike unless told otherwise: as many samples as fit in
0.5 s, at least 10 (BENCHMARKS.md, "How every case is measured"), stopping early below
0.5% noise, from a random seed that is recorded; with the same help, from one
definition (cli/_options.py)."""

from __future__ import annotations

import pytest

from reducebench.cli.multigpu import multigpu_command
from reducebench.cli.run import run_command

SHARED = {"seed": None, "min_samples": 10, "max_noise": 0.5, "max_time": 0.5}


@pytest.mark.parametrize("command", [run_command, multigpu_command], ids=["run", "multigpu"])
def test_the_sampling_defaults_are_the_documented_ones(command):
    defaults = {p.name: p.default for p in command.params if p.name in SHARED}
    assert defaults == SHARED


def test_run_and_multigpu_describe_the_sampling_options_alike():
    def described(command):
        return {p.name: (p.help, p.metavar, p.type.name) for p in command.params
                if p.name in SHARED}

    assert described(run_command) == described(multigpu_command)
