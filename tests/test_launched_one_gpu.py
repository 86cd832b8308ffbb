"""Speed-up and efficiency under a launcher, without a GPU (docs/cluster.md): `--gpus`
of a launched run, rank 0 alone measuring the one-GPU cases while the other ranks take
its outcome (multigpu/one_gpu.py), and a launched run's table, CSV and page with both
figures filled. The fake device's times are 100 us on one GPU and 60 us on two
(test_multigpu.HostSession), so by hand: speed-up 100 / 60 = 1.667, efficiency
1.667 / 2 = 0.833."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from reducebench.core.errors import CaseFailed, CaseSkipped, UsageError
from reducebench.core.stats import StopRule
from reducebench.multigpu.cases import SHARDED, launched_gpus
from reducebench.multigpu.launch import BoundedComm, LocalComm, Unreachable
from reducebench.multigpu.loop import MultiMeasurement
from reducebench.multigpu.one_gpu import RankZeroAlone
from reducebench.results.files import read_results

from test_cluster import launched

STOP = StopRule(min_samples=3, max_time=0.0)


# -- --gpus under a launcher -------------------------------------------------------------

def test_all_is_rank_0_alone_then_the_world():
    assert launched_gpus("all", 2, "torchrun") == "1,2"
    assert launched_gpus(" ALL ", 8, "srun") == "1,8"


def test_the_world_alone_or_both_counts_are_taken_as_given():
    assert launched_gpus("4", 4, "srun") == "4"
    assert launched_gpus("4,1", 4, "srun") == "1,4"
    assert launched_gpus("1,4,4", 4, "srun") == "1,4"


@pytest.mark.parametrize("given", ["1", "2", "1,2", "3,4", "1,2,4"])
def test_a_count_that_is_neither_one_rank_nor_the_world_is_refused(given):
    with pytest.raises(UsageError, match=f"^--gpus {given}: under torchrun every case spans "
                                         "the world's 4 ranks"):
        launched_gpus(given, 4, "torchrun")


@pytest.mark.parametrize("given", ["0", "x", "1,,4"])
def test_a_count_that_is_no_count_is_refused_as_without_a_launcher(given):
    with pytest.raises(UsageError, match="GPU count|expected counts of GPUs"):
        launched_gpus(given, 4, "torchrun")


def test_the_refusal_says_what_to_give():
    with pytest.raises(UsageError, match=r"^--gpus 1: under torchrun every case spans the "
                                         r"world's 2 ranks, one GPU each, after rank 0 alone "
                                         r"for the speed-up: give all \(1,2\) or 2$"):
        launched_gpus("1", 2, "torchrun")


# -- rank 0 alone, the others told ---------------------------------------------------------

class Recording(LocalComm):
    """Rank 0 of two: what it broadcasts is kept for rank 1."""

    size = 2

    def __init__(self):
        self.sent = []

    def bcast(self, obj):
        self.sent.append(obj)
        return obj


class Replaying(LocalComm):
    """Rank 1 of two: each broadcast returns what rank 0 sent, in order."""

    rank, size = 1, 2

    def __init__(self, sent):
        self.sent = list(sent)

    def bcast(self, obj):
        assert obj is None  # only rank 0's object goes out
        return self.sent.pop(0)


class OneGpu:
    """Rank 0's one-GPU session: a floor, then a case of each outcome."""

    def __init__(self):
        self.rounds = 0

    def floor_us(self, stop, cold):
        return 4.5

    def sharded_sum(self, case, host, stop, cold):
        if case.label == "too big":
            raise CaseSkipped("rank 0 needs 40.00 GiB on GPU 0 for its shard; 1.00 GiB is free")
        if case.label == "broken":
            raise CaseFailed("CUDARuntimeError: an illegal memory access")
        return MultiMeasurement([100.0, 101.0, 99.0], [0.0] * 3, [7], [7],
                                shard_sizes=(1000,))

    def new_round(self):
        self.rounds += 1


def never():
    raise AssertionError("only rank 0 opens a GPU for the one-GPU cases")


def outcomes(alone: RankZeroAlone) -> list:
    """floor, a measured case, a skipped one and a failed one, as each rank sees them."""
    seen = [alone.floor_us(STOP, True)]
    for label in ("fits", "too big", "broken"):
        try:
            seen.append(alone.sharded_sum(SimpleNamespace(label=label), None, STOP, True))
        except (CaseSkipped, CaseFailed) as exc:
            seen.append((type(exc).__name__, str(exc)))
    return seen


def test_every_rank_gets_rank_0s_measurement_skip_and_failure():
    opened = []

    def open_session():
        opened.append(OneGpu())
        return opened[-1]

    comm = Recording()
    on_rank_0 = outcomes(RankZeroAlone(BoundedComm(comm, 5.0), open_session))
    assert len(opened) == 1           # opened at the first case, then kept
    assert on_rank_0 == [
        4.5, MultiMeasurement([100.0, 101.0, 99.0], [0.0] * 3, [7], [7], shard_sizes=(1000,)),
        ("CaseSkipped", "rank 0 needs 40.00 GiB on GPU 0 for its shard; 1.00 GiB is free"),
        ("CaseFailed", "CUDARuntimeError: an illegal memory access")]

    on_rank_1 = outcomes(RankZeroAlone(BoundedComm(Replaying(comm.sent), 5.0), never))
    assert on_rank_1 == on_rank_0


def test_a_session_rank_0_cannot_open_fails_the_case_on_every_rank():
    def cannot():
        raise CaseFailed("setting up NCCL on rank 0's GPU alone failed: NcclError")

    comm = Recording()
    with pytest.raises(CaseFailed, match="rank 0's GPU alone failed: NcclError"):
        RankZeroAlone(BoundedComm(comm, 5.0), cannot).floor_us(STOP, True)
    with pytest.raises(CaseFailed, match="rank 0's GPU alone failed: NcclError"):
        RankZeroAlone(BoundedComm(Replaying(comm.sent), 5.0), never).floor_us(STOP, True)


def test_only_rank_0_renews_its_flush_buffer_and_closes():
    session = OneGpu()
    lead = RankZeroAlone(BoundedComm(Recording(), 5.0), lambda: session)
    lead.floor_us(STOP, True)
    lead.new_round()
    assert session.rounds == 1
    lead.close()
    assert lead.session is None
    other = RankZeroAlone(BoundedComm(Replaying([]), 5.0), lambda: session)
    other.new_round()
    other.close()
    assert session.rounds == 1


class Asked(OneGpu):
    """A one-GPU session that keeps the stop rule and mode each call was given, and
    whether it was closed."""

    def __init__(self):
        super().__init__()
        self.asked, self.closed = [], False

    def floor_us(self, stop, cold):
        self.asked.append(("floor", stop, cold))
        return super().floor_us(stop, cold)

    def sharded_sum(self, case, host, stop, cold):
        self.asked.append((case.label, stop, cold))
        return super().sharded_sum(case, host, stop, cold)

    def close(self):
        self.closed = True


def test_rank_0_measures_with_the_runs_stop_rule_and_mode_then_closes_its_session():
    session = Asked()
    lead = RankZeroAlone(BoundedComm(Recording(), 5.0), lambda: session)
    lead.floor_us(STOP, False)
    lead.sharded_sum(SimpleNamespace(label="fits"), None, STOP, False)
    assert session.asked == [("floor", STOP, False), ("fits", STOP, False)]
    lead.close()
    assert session.closed and lead.session is None


def test_a_collective_over_one_gpu_is_skipped_on_every_rank_with_why():
    for comm in (Recording(), Replaying([])):
        alone = RankZeroAlone(BoundedComm(comm, 5.0), never)
        with pytest.raises(CaseSkipped, match="^over one GPU a collective moves nothing$"):
            alone.collective(None, STOP, True)


class Silent(LocalComm):
    rank, size = 1, 2

    def bcast(self, obj):
        threading.Event().wait()


def test_a_rank_waits_for_rank_0_alone_within_the_bound():
    alone = RankZeroAlone(BoundedComm(Silent(), 0.2), lambda: OneGpu())
    with pytest.raises(Unreachable, match=r"^sharded_sum:pingpong float32 n=1000 gpus=1: "
                                          r"waiting for rank 0 alone did not complete within "
                                          r"0.2 s"):
        from reducebench.multigpu.cases import MultiGpuCase
        from reducebench.core.dtypes import DTYPES
        from reducebench.ladder.registry import get_rung

        alone.sharded_sum(MultiGpuCase(SHARDED, DTYPES["float32"], 1000, 1,
                                       get_rung("pingpong")), None, STOP, True)


def test_a_rank_waiting_for_rank_0s_floor_says_so_when_the_bound_ends():
    alone = RankZeroAlone(BoundedComm(Silent(), 0.2), lambda: OneGpu())
    with pytest.raises(Unreachable, match=r"^the one-GPU timing floor: waiting for rank 0 "
                                          r"alone did not complete within 0.2 s"):
        alone.floor_us(STOP, True)


# -- a launched run's table, CSV and page ----------------------------------------------------

def launched_run(monkeypatch, tmp_path, *args):
    out = tmp_path / "m.csv"
    result = launched(monkeypatch, tmp_path, lambda cls: cls(present=2), "--size", "1000",
                      "--max-time", "0.01", "--out", str(out), *args)
    assert result.exit_code == 0, result.output
    return result, read_results(out)


def test_a_launched_run_fills_speed_up_and_efficiency_in_its_csv(monkeypatch, tmp_path):
    _, frame = launched_run(monkeypatch, tmp_path)
    sharded = frame[frame["case"] == SHARDED].set_index("gpus")
    assert list(sharded.index) == [1, 2]
    assert sharded.loc[1, "median_us"] == 100.0 and sharded.loc[2, "median_us"] == 60.0
    assert sharded.loc[2, "speedup"] == pytest.approx(100 / 60)
    assert sharded.loc[2, "efficiency"] == pytest.approx(100 / 60 / 2)
    assert sharded.loc[1, "speedup"] == 1.0 and sharded.loc[1, "efficiency"] == 1.0
    # each row's floor is its own GPU count's: 4.5 us a GPU (HostSession)
    assert sharded.loc[1, "floor_us"] == 4.5 and sharded.loc[2, "floor_us"] == 9.0


def test_a_launched_run_shows_them_in_its_table(monkeypatch, tmp_path):
    result, _ = launched_run(monkeypatch, tmp_path)
    rows = [[c.strip() for c in line.split("\u2502")[1:-1]]
            for line in result.output.splitlines() if line.startswith("\u2502")]
    # n, dtype, GPUs, median, spread, GB/s, speed-up, efficiency, floor, verified
    assert [(r[2], r[3], r[6], r[7]) for r in rows] == [("1", "100.00", "1.00", "1.00"),
                                                        ("2", "60.00", "1.67", "0.83")]


def test_a_launched_run_shows_them_on_its_page(monkeypatch, tmp_path):
    from reducebench.render.html.run_files import load_runs
    from reducebench.render.html.report_tables import multigpu_tables

    launched_run(monkeypatch, tmp_path)
    (table,) = multigpu_tables(load_runs([tmp_path / "m.csv"])[0])
    speedup = [h.label for h in table.headers].index("speed-up")
    efficiency = [h.label for h in table.headers].index("efficiency")
    assert [(r[speedup].text, r[efficiency].text) for r in table.rows] == [
        ("1.00", "1.00"), ("1.67", "0.83")]


def test_the_world_alone_leaves_them_blank(monkeypatch, tmp_path):
    _, frame = launched_run(monkeypatch, tmp_path, "--gpus", "2")
    assert set(frame["gpus"]) == {2}
    assert frame["speedup"].isna().all() and frame["efficiency"].isna().all()
