"""A timed case measured in rounds: each round's budget, the interleaved order, a fresh
input and flush buffer every round, every round verified, a case committed after its
last round (a failure at once), what the row and the samples file keep, and what an
interruption in the middle of a round leaves behind."""

import math
import os
import signal

import pandas as pd
import pytest
from click.testing import CliRunner

import reducebench.device
from reducebench.cli import cli
from reducebench.core.errors import UsageError
from reducebench.core.stats import RoundSummary, StopRule, round_medians
from reducebench.measuring.backend import Sampled
from reducebench.measuring.runner import run
from reducebench.measuring.settings import load_config, settings_from
from reducebench.results.files import read_results
from reducebench.results.samples import CaseSamples, read_samples, upgrade_samples

from fakes import FakeBackend, FakeCliBackend


def _settings(**values):
    values.setdefault("size", "2^10")
    values.setdefault("seed", 1234)
    return settings_from(values)


class RoundTimes(FakeBackend):
    """Every sample of a case's k-th timed execution takes base * factors[k] us, so each
    round's median is known in advance."""

    def __init__(self, factors=(1.0, 1.1, 0.9, 1.2, 1.0), base=10.0, **kwargs):
        super().__init__(**kwargs)
        self.factors, self.base = factors, base
        self.timed: dict[str, int] = {}
        self.rounds_started = 0
        self.samplings = []

    def new_round(self):
        self.rounds_started += 1
        self.events.append(("new_round",))

    def release(self, handle):
        super().release(handle)
        self.events.append(("release",))

    def execute(self, case, plan, handle, sampling):
        if sampling is not None:
            self.samplings.append(sampling)
        return super().execute(case, plan, handle, sampling)

    def bind(self, case, plan, handle):
        self._current = case.label
        return super().bind(case, plan, handle)

    def sampler(self):
        inner = super().sampler()

        def sample(execution, sampling):
            inner(execution, sampling)   # the host executor runs the plan
            count = self.timed.get(self._current, 0)
            self.timed[self._current] = count + 1
            time = self.base * self.factors[count % len(self.factors)]
            times = [time - 0.5, time, time + 0.5]
            return Sampled(times, CaseSamples(times, kept=[True] * 3))
        return sample


def _run(settings, backend):
    written = []

    def write(record):
        backend.events.append(("write", record.rung))
        written.append(record)

    return run(settings, backend, write), written


# -- the budget of a round --------------------------------------------------------------

def test_a_round_gets_its_share_of_the_time_and_samples_and_a_few_samples_at_least():
    rule = StopRule(min_samples=10, max_noise=0.005, max_time=0.5, max_samples=2000)
    assert rule.for_round(5) == StopRule(min_samples=3, max_noise=0.005, max_time=0.1,
                                         max_samples=400)
    assert rule.for_round(2) == StopRule(min_samples=5, max_noise=0.005, max_time=0.25,
                                         max_samples=1000)
    assert rule.for_round(1) is rule
    # 2 samples at most in all: each round still takes 3, so it has a median of its own
    tiny = StopRule(min_samples=1, max_noise=1.0, max_time=0.0, max_samples=2)
    assert tiny.for_round(4).min_samples == 3 and tiny.for_round(4).max_samples == 3


def test_the_spread_of_rounds_is_largest_minus_smallest_over_their_median():
    assert RoundSummary((10.0, 11.0, 9.0, 12.0, 10.0)).spread_pct == pytest.approx(30.0)
    assert math.isnan(RoundSummary((10.0,)).spread_pct)
    # samples tagged with rounds 1, 0, 1, 0: medians 2.0 (round 0) and 3.0 (round 1)
    assert round_medians([3.0, 1.0, 3.0, 3.0], [1, 0, 1, 0]).medians == (2.0, 3.0)


# -- the run -----------------------------------------------------------------------------

def test_rounds_are_interleaved_round_one_of_every_case_then_round_two():
    backend = RoundTimes()
    _run(_settings(size="2^10,2^12", rung="shfl,cub", rounds=3), backend)
    measured = [event[1].split(" n=")[0] + " " + event[1].split("n=")[1].split()[0]
                for event in backend.events if event[0] == "measure"]
    one_round = ["shfl float32 1024", "cub float32 1024", "shfl float32 4096",
                 "cub float32 4096"]
    assert measured == one_round * 3
    assert backend.rounds_started == 2   # a fresh flush buffer before rounds 2 and 3


def test_every_round_uploads_the_input_again_before_freeing_the_last_one():
    from reducebench.core.dtypes import DTYPES
    from reducebench.verify.inputs import exact_inputs

    backend = RoundTimes()
    _run(_settings(size="2^20", rung="shfl", rounds=3), backend)
    first_round = len(exact_inputs(2**20, DTYPES["float32"]))
    assert first_round >= 2   # the timed input and others that only verify
    uploads = [e for e in backend.events if e[0] == "upload"]
    # then the timed input alone in each later round, the same values each time
    assert len(uploads) == first_round + 2
    assert all((u.data == backend.uploads[0].data).all()
               for u in backend.uploads[first_round:])
    # each round's new input is uploaded before the last round's are released (the
    # first round's executions: the timed one, then each other input verified)
    order = [e[0] for e in backend.events if e[0] in ("upload", "measure", "release")]
    k = first_round
    assert order == (["upload"] * k + ["measure"] * k + ["upload"] + ["release"] * k
                     + ["measure", "upload", "release", "measure", "release"])


def test_a_row_keeps_each_rounds_median_their_spread_and_the_noise_inside_a_round():
    backend = RoundTimes(factors=(1.0, 1.1, 0.9, 1.2, 1.0))
    records, _ = _run(_settings(rung="shfl", rounds=5), backend)
    (r,) = records
    assert r.rounds == 5
    assert r.round_medians_us == "10.0000;11.0000;9.0000;12.0000;10.0000"
    assert r.round_spread_pct == pytest.approx(100 * (12 - 9) / 10)
    # every round's samples pooled: 8.5 9 9.5 9.5 9.5 10 10 [10.5] 10.5 10.5 11 ... 12.5
    assert r.samples == 15 and r.median_us == 10.5
    # inside a round: samples t - 0.5, t, t + 0.5, stdev 0.5, over a mean of t; the
    # median over rounds of 0.5 / t is 0.5 / 10
    assert r.noise_pct == pytest.approx(100 * 0.5 / 10)
    assert r.raw_samples.rounds == [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4]


def test_each_round_samples_with_its_share_and_energy_only_in_the_first():
    backend = RoundTimes()
    _run(_settings(rung="shfl", rounds=4, max_time=0.4, energy=True), backend)
    assert [s.stop.max_time for s in backend.samplings] == [pytest.approx(0.1)] * 4
    assert [s.energy for s in backend.samplings] == [True, False, False, False]


def test_a_case_is_written_after_its_last_round_a_failure_at_once():
    backend = RoundTimes(fail={"cub"})
    records, written = _run(_settings(rung="shfl,cub", rounds=3), backend)
    writes = [i for i, e in enumerate(backend.events) if e[0] == "write"]
    measures = [i for i, e in enumerate(backend.events) if e[0] == "measure"]
    # cub fails in round 1 and is written at once; never measured again
    assert [backend.events[i][1] for i in writes] == ["cub", "shfl"]
    assert writes[0] < measures[2]
    assert sum(1 for e in backend.events if e[0] == "measure" and "cub" in e[1]) == 1
    assert writes[1] > measures[-1]          # shfl: after its third round
    assert [r.rung for r in records] == ["shfl", "cub"]   # returned in the cases' order
    assert records[1].status == "error" and records[1].rounds == 0


def test_a_wrong_value_in_a_later_round_fails_the_case():
    class WrongInRoundThree(RoundTimes):
        def execute(self, case, plan, handle, sampling):
            measured = super().execute(case, plan, handle, sampling)
            if sampling is not None and self.timed.get(case.label) == 3:
                measured.values = [measured.values[0] + 1] * len(measured.values)
            return measured

    records, _ = _run(_settings(rung="shfl", rounds=4), WrongInRoundThree())
    assert records[0].status == "FAIL"


def test_checking_and_profiling_take_one_round():
    checked = RoundTimes()
    _run(_settings(rung="shfl", rounds=5, timed=False), checked)
    assert checked.rounds_started == 0
    profiled = RoundTimes()
    settings = _settings(rung="shfl", rounds=5)
    settings.profile = True
    records, _ = _run(settings, profiled)
    assert profiled.rounds_started == 0 and records[0].rounds == 1


def test_the_memory_check_counts_the_next_rounds_input_beside_the_last():
    from reducebench.core.errors import OutOfDeviceMemory
    from reducebench.measuring.runner import expand_cases, memory_needed, plan_case
    from reducebench.verify.inputs import exact_inputs

    settings = _settings(size="2^20", rung="shfl", rounds=1)
    (case,) = expand_cases(settings)
    inputs = len(exact_inputs(case.n, case.dtype))
    one_round = memory_needed(case, plan_case(case, 132), inputs)
    _run(settings, RoundTimes(free=one_round))
    with pytest.raises(OutOfDeviceMemory):
        _run(_settings(size="2^20", rung="shfl", rounds=2), RoundTimes(free=one_round))
    _run(_settings(size="2^20", rung="shfl", rounds=2),
         RoundTimes(free=one_round + case.n * case.dtype.itemsize))


@pytest.mark.parametrize("value", ["0", "51", "x", "2.5", "-1", ""])
def test_rounds_must_be_a_whole_number_from_1_to_50(value):
    with pytest.raises(UsageError, match="--rounds"):
        _settings(rounds=value)


def test_a_config_file_sets_rounds(tmp_path):
    config = tmp_path / "c.toml"
    config.write_text("rounds = 7\n")
    assert settings_from(load_config(config)).rounds == 7
    config.write_text("rounds = 2.5\n")
    with pytest.raises(UsageError, match="rounds"):
        load_config(config)


# -- through the command line ---------------------------------------------------------------

@pytest.fixture
def fake_device(monkeypatch):
    settings: dict = {}
    opened = []

    def open_fake(device=0):
        opened.append(FakeCliBackend(**settings))
        return opened[-1]

    monkeypatch.setattr(reducebench.device, "open_backend", open_fake)
    return settings, opened


def test_an_interruption_in_a_round_saves_no_half_measured_case(fake_device, tmp_path):
    settings, opened = fake_device

    def interrupt(entered):
        if entered == 5:   # 2 cases x 3 rounds: round 3 of the first case
            os.kill(os.getpid(), signal.SIGINT)

    settings["hooks"] = {"sample": interrupt}
    out = tmp_path / "r.csv"
    args = ["run", "--size", "2^10", "--rung", "shfl,cub", "--seed", "5", "--rounds", "3"]
    result = CliRunner().invoke(cli, [*args, "--out", str(out)])
    text = " ".join(result.output.split())
    assert result.exit_code == 130, result.output
    assert "2 case(s) had only some of their rounds measured and were not saved" in text
    assert "nothing saved" in text and not out.exists()


def test_resume_measures_the_rest_in_the_files_rounds(fake_device, tmp_path):
    settings, opened = fake_device

    def interrupt(entered):
        # 2 sizes x 3 rounds: the 6th sampling is 2^12's third round, after 2^10's
        # third round wrote its row
        if entered == 6:
            os.kill(os.getpid(), signal.SIGINT)

    settings["hooks"] = {"sample": interrupt}
    out = tmp_path / "r.csv"
    result = CliRunner().invoke(cli, ["run", "--size", "2^10,2^12", "--rung", "shfl",
                                      "--seed", "5", "--rounds", "3", "--out", str(out)])
    assert result.exit_code == 130, result.output
    assert list(read_results(out)["n"]) == [1024]
    settings.pop("hooks")
    result = CliRunner().invoke(cli, ["run", "--resume", str(out)])
    assert result.exit_code == 0, result.output
    assert opened[1].counts["sample"] == 3   # the one case left, in the file's 3 rounds
    assert list(read_results(out)["rounds"]) == [3, 3]


# -- the samples file -----------------------------------------------------------------------

def test_a_samples_file_without_rounds_reads_as_one_round_and_is_upgraded_on_resume(
        tmp_path):
    old = tmp_path / "old.samples.csv"
    old.write_text("schema_version,run_id,rung,dtype,n,block,params,phase,index,time_us,"
                   "sm_clock_mhz,mem_clock_mhz,kept\n"
                   "1,abc,cub,float32,1024,0,,0,0,7.5,,,True\n"
                   "1,abc,cub,float32,1024,0,,1,1,7.0,,,True\n")
    frame = read_samples(old)
    assert list(frame["round"]) == [0, 0]
    backup = upgrade_samples(old)
    assert backup.read_text().startswith("schema_version,run_id,rung,dtype,n,block,params,"
                                         "phase")
    upgraded = pd.read_csv(old)
    assert list(upgraded["round"]) == [0, 0] and set(upgraded["schema_version"]) == {2}
    assert upgrade_samples(old) is None   # already version 2


def test_the_fastest_phase_is_chosen_in_each_round():
    from reducebench.results.samples import case_samples

    # round 0: phase 1 faster (7 < 8); round 1: phase 0 faster (6 < 9)
    frame = pd.DataFrame({
        "rung": "cub", "dtype": "float32", "n": 1024, "block": 0, "params": "",
        "round": [0, 0, 1, 1], "phase": [0, 1, 0, 1], "index": [0, 1, 2, 3],
        "time_us": [8.0, 7.0, 6.0, 9.0], "kept": True})
    assert list(case_samples(frame, ("cub", "float32", 1024, 0, ""))) == [7.0, 6.0]


def test_a_lost_context_keeps_each_case_measured_so_far_with_the_rounds_it_had():
    from reducebench.core.errors import ContextLost

    backend = RoundTimes(lose={"single_pass"})
    written = []
    with pytest.raises(ContextLost):
        run(_settings(rung="shfl,single_pass,cub", rounds=3), backend, written.append)
    # shfl had its first round; single_pass lost the context in its first; cub never ran
    assert [r.rung for r in written] == ["shfl", "single_pass"]
    shfl, lost = written
    assert shfl.status == "ok" and shfl.rounds == 1
    assert "measured in 1 of 3 rounds" in shfl.note and lost.status == "error"
