"""A measuring command's life without the command line (measuring/lifecycle.py,
render/closing.py, multigpu/ranks.py): where its results go, what an interruption, a
lost GPU context or a failed case leaves, the closing lines and the exit code. The
lines expected here are written out by hand from what each command printed."""

from __future__ import annotations

import contextlib
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

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


# -- one GPU's run: what measure_cases passes on and keeps ------------------------------------

def two_cases():
    settings = settings_from({"size": 1000, "rung": "shfl,cub", "max_time": 0.01,
                              "rounds": 1, "seed": 1})
    return settings, settings_cases(settings)


def test_the_results_folder_is_reused_when_it_is_there(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    RESULTS_DIR.mkdir()
    assert results_path(None, "Fake GPU").parent == RESULTS_DIR


def test_a_new_store_is_named_after_what_it_holds_and_keeps_its_kind(tmp_path, monkeypatch):
    from reducebench.results.schema import MULTIGPU

    monkeypatch.chdir(tmp_path)
    store = new_store(None, "multigpu Fake GPU", kind=MULTIGPU)
    assert store.path.name.endswith("_multigpu-fake-gpu.csv") and store.kind == MULTIGPU


def test_a_lost_context_given_to_the_ending_makes_it_exit_1_and_is_named():
    ending = store_ending([], None, lost=RuntimeError("shfl float32 n=1000"))
    assert ending.exit_code == 1
    assert closing_lines(ending) == [
        "[red]the CUDA context was lost[/] in shfl float32 n=1000; nothing saved"]


def test_each_case_is_announced_checked_and_handed_on_as_it_is_made(tmp_path):
    settings, cases = two_cases()
    opened_with, announced, checked, handed = [], [], [], []

    def open_store(backend):
        opened_with.append(backend)
        return new_store(tmp_path / "r.csv", "unused")

    def watch(total):
        return contextlib.nullcontext(
            lambda case, index, count: announced.append((case.rung.name, index, count)))

    ending = measure_cases(settings, cases, HostBackend, open_store, watch,
                           after_case=lambda case, record: checked.append(record.rung),
                           on_record=lambda record: handed.append(record.rung))
    assert announced == [("shfl", 0, 2), ("cub", 1, 2)]
    assert checked == ["shfl", "cub"] and handed == ["shfl", "cub"]
    assert len(opened_with) == 1 and isinstance(opened_with[0], HostBackend)
    assert ending.backend is opened_with[0]


def test_only_the_cases_given_are_measured(tmp_path):
    settings, cases = two_cases()
    ending = measure_cases(settings, cases[1:], HostBackend,
                           lambda backend: new_store(tmp_path / "r.csv", "unused"))
    assert [r.rung for r in ending.records] == ["cub"]


def test_without_a_case_list_the_sweep_is_measured_and_its_length_is_not_known():
    settings, _ = two_cases()
    totals = []

    def watch(total):
        totals.append(total)
        return contextlib.nullcontext(None)

    ending = measure_cases(settings, None, HostBackend, lambda backend: None, watch)
    assert [r.rung for r in ending.records] == ["shfl", "cub"] and totals == [None]


def test_a_lost_context_stops_the_run_and_the_ending_names_it(tmp_path):
    from fakes import FakeBackend

    from reducebench.core.errors import ContextLost

    settings, cases = two_cases()
    ending = measure_cases(settings, cases, lambda: FakeBackend(lose={"shfl"}),
                           lambda backend: new_store(tmp_path / "r.csv", "unused"))
    assert [r.rung for r in ending.records] == ["shfl"]
    assert isinstance(ending.lost, ContextLost) and ending.exit_code == 1
    assert closing_lines(ending)[0].startswith("[red]the CUDA context was lost[/] in shfl")


def test_check_says_what_is_on_disk_only_when_a_file_was_written(tmp_path):
    from fakes import FakeBackend

    settings, cases = two_cases()
    failing = lambda: FakeBackend(wrong={"cub": 0.0})  # noqa: E731
    no_file = measure_cases(settings, cases, failing, lambda backend: None, quiet=True)
    assert no_file.kept == "" and no_file.exit_code == 1
    assert closing_lines(no_file) == []  # each case already said its verdict
    to_file = measure_cases(settings, cases, failing,
                            lambda backend: new_store(tmp_path / "r.csv", "unused"),
                            quiet=True)
    assert to_file.kept.startswith(f"2 case(s) saved in {tmp_path / 'r.csv'}")


# -- `run --device all`: measure_each_device, with stand-in child processes ------------------

class EndedChild:
    """A child process that has already ended with `code`."""

    def __init__(self, code: int = 0):
        self.code, self.returncode = code, None

    def communicate(self, timeout=None):
        self.returncode = self.code
        return "", None

    def poll(self):
        return self.returncode


def each_device(monkeypatch, codes, out, seed=7, made=(), capture=False):
    """measure_each_device on GPUs 0 and 1, whose children end with `codes` (None: a
    signal comes while it starts); the children whose index is in `made` leave their
    results file. The Ending, what was said and each child's (argv, capture)."""
    from reducebench.measuring import each_device as module
    from reducebench.measuring.lifecycle import measure_each_device

    argvs = []

    def launch(argv, captured):
        argvs.append((argv, captured))
        if codes[len(argvs) - 1] is None:
            raise Interrupted(signal.SIGINT)
        if len(argvs) - 1 in made:
            Path(argv[argv.index("--out") + 1]).write_text("rows")
        return EndedChild(codes[len(argvs) - 1])

    monkeypatch.setattr(module, "popen", launch)
    said = []
    settings = SimpleNamespace(out=out, seed=seed)
    ending = measure_each_device(settings, [0, 1], ["--size", "2^10"], capture, said.append)
    return ending, said, [argv for argv, _ in argvs], [c for _, c in argvs]


def test_every_gpu_is_announced_with_the_one_seed_and_its_file(tmp_path, monkeypatch):
    ending, said, _, _ = each_device(monkeypatch, [0, 0], tmp_path / "r.csv")
    assert said == ["2 GPUs, one after the other, seed 7:",
                    f"[bold]GPU 0: {tmp_path / 'r.gpu0.csv'}[/]",
                    f"[bold]GPU 1: {tmp_path / 'r.gpu1.csv'}[/]"]
    assert [r.device for r in ending.records] == [0, 1]
    assert ending.exit_code == 0 and ending.failed == [] and closing_lines(ending) == []


def test_without_a_seed_one_is_drawn_for_every_gpu(tmp_path, monkeypatch):
    import reducebench.verify.inputs

    monkeypatch.setattr(reducebench.verify.inputs, "new_seed", lambda: 42)
    _, said, argvs, _ = each_device(monkeypatch, [0, 0], tmp_path / "r.csv", seed=None)
    assert said[0] == "2 GPUs, one after the other, seed 42:"
    assert [a[a.index("--seed") + 1] for a in argvs] == ["42", "42"]


def test_without_out_the_gpu_files_go_under_results_named_gpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, _, argvs, _ = each_device(monkeypatch, [0, 0], None)
    outs = [Path(a[a.index("--out") + 1]) for a in argvs]
    assert [p.parent for p in outs] == [RESULTS_DIR, RESULTS_DIR]
    assert outs[0].name.endswith("_gpus.gpu0.csv") and outs[1].name.endswith("_gpus.gpu1.csv")


def test_a_failed_gpu_is_named_and_the_first_failing_code_is_the_exit_code(tmp_path,
                                                                          monkeypatch):
    ending, _, _, _ = each_device(monkeypatch, [0, 2], tmp_path / "r.csv")
    assert ending.failed == ["GPU 1 (exit 2)"] and ending.exit_code == 2
    assert closing_lines(ending) == [
        "[bold red]not every GPU's run succeeded[/]: GPU 1 (exit 2)"]


def test_an_interrupted_gpu_run_names_the_files_its_children_left(tmp_path, monkeypatch):
    ending, _, argvs, _ = each_device(monkeypatch, [0, 130], tmp_path / "r.csv",
                                      made={0, 1})
    assert len(argvs) == 2 and [r.device for r in ending.records] == [0, 1]
    assert ending.exit_code == 130
    assert closing_lines(ending) == [f"[yellow]interrupted[/] (SIGINT): saved "
                                     f"{tmp_path / 'r.gpu0.csv'}, {tmp_path / 'r.gpu1.csv'}"]


def test_an_interruption_before_any_file_saves_nothing(tmp_path, monkeypatch):
    ending, _, _, _ = each_device(monkeypatch, [130, 0], tmp_path / "r.csv")
    assert ending.kept == "saved nothing" and ending.exit_code == 130
    assert [r.exit_code for r in ending.records] == [130, None]


def test_a_signal_while_the_first_child_starts_saves_nothing(tmp_path, monkeypatch):
    ending, _, _, _ = each_device(monkeypatch, [None, 0], tmp_path / "r.csv")
    assert ending.records == [] and ending.exit_code == 130
    assert closing_lines(ending) == ["[yellow]interrupted[/] (SIGINT): saved nothing"]


def test_json_output_has_every_child_print_to_a_pipe(tmp_path, monkeypatch):
    _, _, _, captured = each_device(monkeypatch, [0, 0], tmp_path / "r.csv", capture=True)
    assert captured == [True, True]


def test_an_existing_gpu_file_is_refused_before_any_child_starts(tmp_path, monkeypatch):
    from reducebench.core.errors import UsageError

    (tmp_path / "r.gpu1.csv").write_text("taken")
    with pytest.raises(UsageError, match="r.gpu1.csv"):
        each_device(monkeypatch, [0, 0], tmp_path / "r.csv")
