"""A measuring command's life without the command line (measuring/lifecycle.py,
render/closing.py, multigpu/ranks.py): where its results go, what an interruption, a
lost GPU context or a failed case leaves, the closing lines and the exit code. The
lines expected here are written out by hand from what each command printed."""

from __future__ import annotations

import signal
from types import SimpleNamespace

from reducebench.core.interrupt import Interrupted
from reducebench.measuring.hostexec import HostBackend
from reducebench.measuring.lifecycle import (Ending, measure_cases, new_store, results_path,
                                             store_ending)
from reducebench.measuring.settings import settings_from
from reducebench.render.closing import closing_lines
from reducebench.results.naming import RESULTS_DIR
from reducebench.results.schema import Record


def interrupted(unfinished: int = 0) -> Interrupted:
    exc = Interrupted(signal.SIGINT)
    exc.unfinished = unfinished
    return exc


def failed(rung: str) -> Record:
    return Record(rung, "float32", 1000, 256, status="FAIL", error="wrong sum")


def test_the_exit_code_follows_how_it_ended():
    assert Ending().exit_code == 0
    assert Ending(interrupted=interrupted(), failed=["x"]).exit_code == 130
    assert Ending(lost=RuntimeError("shfl")).exit_code == 1
    assert Ending(failed=["shfl float32 n=1000"]).exit_code == 1
    assert Ending(failed=["GPU 1 (exit 2)"], code=2).exit_code == 2
    assert Ending(code=3, show=False).exit_code == 3


def test_an_interrupted_run_says_what_is_saved_and_what_was_not():
    ending = Ending(kept="2 case(s) saved in r.csv", interrupted=interrupted(unfinished=3))
    assert closing_lines(ending) == [
        "[yellow]interrupted[/] (SIGINT): 2 case(s) saved in r.csv; 3 case(s) had only some "
        "of their rounds measured and were not saved (--resume measures them again)"]
    ending.resumable = False
    assert closing_lines(ending)[0].endswith("(a new run measures them)")
    ending.resumable = None  # tune: nothing to say of rounds
    assert closing_lines(ending) == ["[yellow]interrupted[/] (SIGINT): 2 case(s) saved in r.csv"]


def test_check_without_a_file_says_only_the_signal():
    assert closing_lines(Ending(interrupted=interrupted(), quiet=True)) == [
        "[yellow]interrupted[/] (SIGINT)"]
    assert closing_lines(Ending(lost=RuntimeError("shfl"), quiet=True)) == []
    assert closing_lines(Ending(failed=["shfl"], quiet=True)) == []


def test_sanitize_says_which_tool_was_running():
    ending = Ending(interrupted=interrupted(), resumable=None,
                    during=" while memcheck ran; no report written")
    assert closing_lines(ending) == [
        "[yellow]interrupted[/] (SIGINT) while memcheck ran; no report written"]


def test_a_lost_context_names_the_case_and_what_is_saved():
    ending = Ending(kept="1 case(s) saved in r.csv", lost=RuntimeError("shfl float32 n=1000"))
    assert closing_lines(ending) == [
        "[red]the CUDA context was lost[/] in shfl float32 n=1000; 1 case(s) saved in r.csv"]


def test_failures_are_counted_and_the_first_ten_named(tmp_path):
    store = new_store(tmp_path / "r.csv", "unused")
    records = [failed(f"rung{i}") for i in range(12)]
    for record in records:
        store.commit(record)
    ending = store_ending(records, store)
    names = ", ".join(f"rung{i} float32 n=1000" for i in range(10))
    assert closing_lines(ending) == [f"12 case(s) written to {tmp_path / 'r.csv'}",
                                     f"[bold red]12 case(s) failed[/]: {names}"]
    assert ending.exit_code == 1 and ending.path == tmp_path / "r.csv"


def test_a_heading_names_every_failure_it_is_given():
    ending = Ending(failed=[f"GPU {i} (exit 1)" for i in range(12)], code=1,
                    failure="not every GPU's run succeeded")
    assert closing_lines(ending) == ["[bold red]not every GPU's run succeeded[/]: "
                                     + ", ".join(f"GPU {i} (exit 1)" for i in range(12))]


def test_nothing_opened_is_nothing_saved():
    ending = store_ending([], None, interrupted())
    assert ending.kept == "nothing saved" and ending.path is None


def test_results_go_where_out_says_or_to_a_new_file_under_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert results_path(tmp_path / "mine.csv", "Fake GPU") == tmp_path / "mine.csv"
    assert not RESULTS_DIR.exists()  # --out given: no folder made
    made = results_path(None, "Fake GPU")
    assert RESULTS_DIR.is_dir() and made.parent == RESULTS_DIR
    assert made.name.endswith("_fake-gpu.csv")


def test_a_signal_while_the_device_opens_ends_the_run_with_nothing_saved():
    def opening():
        raise Interrupted(signal.SIGTERM)

    settings = settings_from({"size": 1000, "rung": "shfl", "max_time": 0.01})
    ending = measure_cases(settings, None, opening, lambda backend: None)
    assert ending.exit_code == 130 and ending.kept == "nothing saved"
    assert closing_lines(ending) == ["[yellow]interrupted[/] (SIGTERM): nothing saved"]


def test_a_run_on_the_host_executor_commits_every_case(tmp_path):
    settings = settings_from({"size": 1000, "rung": "shfl,cub", "max_time": 0.01,
                              "rounds": 1, "seed": 1})
    watched = []

    def watch(total):
        import contextlib
        watched.append(total)
        return contextlib.nullcontext(lambda case, index, count: None)

    ending = measure_cases(settings, settings_cases(settings), HostBackend,
                           lambda backend: new_store(tmp_path / "r.csv", "unused"), watch)
    assert ending.exit_code == 0 and [r.rung for r in ending.records] == ["shfl", "cub"]
    assert ending.kept.startswith("2 case(s) saved in") and watched == [2]
    assert ending.written.startswith("2 case(s) written to")


def settings_cases(settings):
    from reducebench.measuring.runner import expand_cases

    return expand_cases(settings)


def test_a_rank_stopped_by_a_signal_closes_its_connection_and_keeps_rank_0s_rows():
    from reducebench.multigpu.launch import World
    from reducebench.multigpu.ranks import as_rank

    closed = []
    member = SimpleNamespace(comm=SimpleNamespace(close=lambda: closed.append(True)))

    def body(box):
        box["member"] = member
        raise Interrupted(signal.SIGINT)

    world = World("torchrun", 1, 2, 1, 1, 1, 2)
    ending = as_rank(world, body, label=str)
    assert closed == [True] and ending.exit_code == 130
    assert ending.kept == "nothing saved" and ending.resumable is False
