"""What every row of a run repeats: where, when, with what and how it was measured."""

from __future__ import annotations

import datetime as _dt
import json
import os
import socket
import subprocess
import uuid

from reducebench.core.paths import CHECKOUT_DIR
from reducebench.core.version import __version__
from reducebench.results.schema import DEVICE_FIELDS, RANK_FIELDS, SCHEMA_VERSION, SINGLE


def run_metadata(device: dict, options: dict, seed: int, kind: str = SINGLE,
                 rank: dict | None = None) -> dict:
    """What every row of one run repeats: where, when, with what, and how (the sweep's
    options as RunSettings.options() gives them). `rank`: RANK_FIELDS, for a process
    started by a launcher (torchrun, srun, mpirun)."""
    facts = {"host": socket.gethostname(), **device}
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "run_id": uuid.uuid4().hex[:12],
        "utc_time": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        **{k: facts.get(k, "") for k in DEVICE_FIELDS},
        **{k: (rank or {}).get(k, "") for k in RANK_FIELDS},
        "reducebench": __version__, "git_commit": git_commit(), "mode": options["mode"],
        "timing": options["timing"], "inputs": options["inputs"], "seed": seed,
        "options": json.dumps(options, sort_keys=True),
    }


GIT_TIMEOUT_S = 5.0  # a git that takes longer (a hung filesystem) gives "unknown"


def git_commit() -> str:
    """The checkout's commit (with -dirty), or REDUCEBENCH_COMMIT where the tree travelled
    without its .git (a copy on a GPU machine)."""
    if os.environ.get("REDUCEBENCH_COMMIT"):
        return os.environ["REDUCEBENCH_COMMIT"]
    root = CHECKOUT_DIR
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
        commit = out.stdout.strip()
        if commit:
            dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                    "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=GIT_TIMEOUT_S).stdout.strip()
            return commit + ("-dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


