"""What every row of a run repeats (results/metadata.py): the columns in the schema's
order, the device's facts and the launcher's rank where given (empty where not), the
sweep's options as sorted JSON, and the checkout's commit, with -dirty for changed
tracked files, REDUCEBENCH_COMMIT for a tree without its .git, "unknown" otherwise."""

from __future__ import annotations

import datetime as dt
import json
import socket
import subprocess
from pathlib import Path

import pytest

from reducebench.core.version import __version__
from reducebench.results import metadata
from reducebench.results.metadata import git_commit, run_metadata
from reducebench.results.schema import META_FIELDS

OPTIONS = {"mode": "cold", "timing": "graph", "inputs": "exact", "rung": ["shfl"]}


@pytest.fixture
def commit(monkeypatch):
    monkeypatch.setenv("REDUCEBENCH_COMMIT", "abc1234")


def test_the_columns_in_the_schemas_order_with_the_sweeps_settings(commit):
    before = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    meta = run_metadata({"gpu": "H100", "sm_count": 132}, OPTIONS, seed=7)
    after = dt.datetime.now(dt.timezone.utc)
    assert tuple(meta) == META_FIELDS
    assert meta["schema_version"] == 6 and meta["kind"] == "single"
    assert (meta["mode"], meta["timing"], meta["inputs"], meta["seed"]) == (
        "cold", "graph", "exact", 7)
    assert meta["options"] == ('{"inputs": "exact", "mode": "cold", "rung": ["shfl"], '
                               '"timing": "graph"}')
    assert meta["reducebench"] == __version__ and meta["git_commit"] == "abc1234"
    # to the second, in UTC, taken while the call ran
    assert meta["utc_time"].endswith("+00:00") and "." not in meta["utc_time"]
    assert before <= dt.datetime.fromisoformat(meta["utc_time"]) <= after


def test_device_facts_given_and_the_rest_empty(commit):
    meta = run_metadata({"gpu": "H100", "sm_count": 132, "not_a_field": 1}, OPTIONS, seed=1)
    assert (meta["gpu"], meta["sm_count"]) == ("H100", 132)
    assert meta["host"] == socket.gethostname()
    assert meta["gpu_uuid"] == meta["driver"] == meta["cupy"] == "" and "not_a_field" not in meta
    assert run_metadata({"host": "node7"}, OPTIONS, seed=1)["host"] == "node7"


def test_a_launchers_rank_or_empty_cells(commit):
    plain = run_metadata({}, OPTIONS, seed=1)
    assert (plain["rank"], plain["local_rank"], plain["world_size"]) == ("", "", "")
    ranked = run_metadata({}, OPTIONS, seed=1, kind="multigpu",
                          rank={"rank": 3, "world_size": 4})
    assert (ranked["kind"], ranked["rank"], ranked["local_rank"], ranked["world_size"]) == (
        "multigpu", 3, "", 4)


def test_each_run_has_its_own_twelve_digit_id(commit):
    ids = {run_metadata({}, OPTIONS, seed=1)["run_id"] for _ in range(3)}
    assert len(ids) == 3
    assert all(len(i) == 12 and int(i, 16) >= 0 for i in ids)


def git(folder: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    monkeypatch.delenv("REDUCEBENCH_COMMIT", raising=False)
    git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one\n")
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    monkeypatch.setattr(metadata, "CHECKOUT_DIR", tmp_path)
    return tmp_path


def test_the_checkouts_commit_and_dirty_only_for_changed_tracked_files(checkout):
    short = git(checkout, "rev-parse", "--short", "HEAD")
    assert git_commit() == short
    (checkout / "new.txt").write_text("untracked\n")
    assert git_commit() == short
    (checkout / "a.txt").write_text("two\n")
    assert git_commit() == short + "-dirty"


def test_the_commit_named_for_a_tree_without_its_git(checkout, monkeypatch):
    monkeypatch.setenv("REDUCEBENCH_COMMIT", "0123abc")
    assert git_commit() == "0123abc"
    monkeypatch.setenv("REDUCEBENCH_COMMIT", "")          # empty: asked of git
    assert git_commit() == git(checkout, "rev-parse", "--short", "HEAD")


def test_unknown_outside_a_checkout_or_without_git(tmp_path, monkeypatch):
    monkeypatch.delenv("REDUCEBENCH_COMMIT", raising=False)
    monkeypatch.setattr(metadata, "CHECKOUT_DIR", tmp_path / "not_a_checkout")
    assert git_commit() == "unknown"

    def no_git(*args, **kwargs):
        raise FileNotFoundError("git")

    monkeypatch.setattr(metadata.subprocess, "run", no_git)
    assert git_commit() == "unknown"


@pytest.mark.parametrize("hangs", ["rev-parse", "status"])
def test_a_git_that_hangs_is_given_up(tmp_path, monkeypatch, hangs):
    import os
    import time

    monkeypatch.delenv("REDUCEBENCH_COMMIT", raising=False)
    folder = tmp_path / "bin"
    folder.mkdir()
    git_stub = folder / "git"        # `git -C DIR rev-parse ...` / `git -C DIR status ...`
    git_stub.write_text(f'#!/bin/sh\n[ "$3" = {hangs} ] && exec sleep 60\necho abc1234\n')
    git_stub.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(metadata, "GIT_TIMEOUT_S", 0.5)
    began = time.monotonic()
    assert git_commit() == "unknown"
    assert time.monotonic() - began < 10
