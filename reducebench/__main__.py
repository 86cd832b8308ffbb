"""The entry point (`reducebench` and `python -m reducebench`). Signal handlers go in
before anything heavy is imported: Ctrl-C or SIGTERM while Python is still loading the
command line (pandas alone can take seconds on a cold machine) ends the process with one
line and exit code 130, not a traceback; nothing has been measured or opened yet. Once
the command line is loaded the usual handlers are back, and each measuring command
installs its own, through the same core/interrupt.py (which imports nothing heavy)."""

from __future__ import annotations

import os
import signal
import sys

from reducebench.core.interrupt import EXIT_CODE as INTERRUPTED_EXIT, handling


def _while_starting(signum, frame) -> None:
    os.write(2, f"reducebench: interrupted ({signal.Signals(signum).name}) while starting; "
                "nothing was measured\n".encode())
    os._exit(INTERRUPTED_EXIT)


def main() -> None:
    with handling(_while_starting):
        from reducebench.cli import main as command_line
    command_line()


if __name__ == "__main__":
    sys.exit(main())
