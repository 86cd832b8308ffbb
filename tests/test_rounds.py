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

from reducebench.cli import cli
from reducebench.core.errors import UsageError
from reducebench.core.stats import RoundSummary, StopRule, round_medians
from reducebench.measuring.backend_protocol import Sampled
from reducebench.measuring.runner import run
from reducebench.measuring.settings import load_config, settings_from
from reducebench.results.files import read_results
from reducebench.results.samples_file import CaseSamples, read_samples, upgrade_samples

from fakes import FakeBackend


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
    # the noise asked for stays; 2000 samples over 3 rounds: 666 whole samples each
    assert StopRule(max_noise=0.02, max_samples=2000).for_round(3) == StopRule(
        min_samples=4, max_noise=0.02, max_time=0.5 / 3, max_samples=666)


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

def test_an_interruption_in_a_round_saves_no_half_measured_case(fake_device, tmp_path):
    settings = fake_device.settings

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
    settings, opened = fake_device.settings, fake_device.opened

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
    assert list(upgraded["round"]) == [0, 0] and set(upgraded["schema_version"]) == {3}
    assert list(upgraded["rows"]) == [1, 1]
    assert upgrade_samples(old) is None   # already version 3


def test_the_fastest_phase_is_chosen_in_each_round():
    from reducebench.results.samples_file import case_samples

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


# -- what a case's rounds add up to ------------------------------------------------------

def _round(times, **sampled):
    from reducebench.measuring.backend_protocol import Measurement

    samples = CaseSamples(times, phases=sampled.pop("phases", None),
                          sm_clock_mhz=sampled.pop("sm", None),
                          mem_clock_mhz=sampled.pop("mem", None),
                          kept=sampled.pop("kept", None))
    return Measurement([1, 1], list(times), Sampled(list(times), samples, **sampled))


def test_a_cases_rounds_pool_their_samples_and_what_sampling_saw():
    from reducebench.measuring.rounds import RoundsTaken

    taken = RoundsTaken()
    taken.add(_round([5.0, 6.0], phases=[0, 1], sm=[1980, 1965], mem=[2619, 2619],
                     kept=[True, False], discarded=1, graph_k=4, energy=None))
    taken.add(_round([7.0], phases=[1], sm=[None], mem=[2619], kept=[True], throttled=True,
                     discarded=2, graph_k=8, energy="first energy"))
    taken.add(_round([8.0], energy="second energy", graph_k=16))
    whole = taken.combined()
    assert whole.times_us == [5.0, 6.0, 7.0, 8.0] and whole.values == []
    timing = whole.timing
    assert timing.times_us == [5.0, 6.0, 7.0, 8.0]
    assert (timing.throttled, timing.discarded, timing.graph_k) == (True, 3, 16)  # the last
    assert timing.energy == "first energy"      # measured in one round: the first that has it
    samples = timing.samples
    assert samples.rounds == [0, 0, 1, 2]
    assert samples.phases == [0, 1, 1, 0]       # a round without phases: phase 0
    assert samples.sm_clock_mhz == [1980, 1965, None, None]
    assert samples.mem_clock_mhz == [2619, 2619, 2619, None]
    assert samples.kept == [True, False, True, True]   # unknown: kept


def test_rounds_without_timing_have_no_samples_and_no_noise():
    from reducebench.measuring.backend_protocol import Measurement
    from reducebench.measuring.rounds import RoundsTaken, combine_rounds

    taken = RoundsTaken()
    taken.add(Measurement([1], []))
    assert math.isnan(taken.inner_noise()) and taken.combined().timing is None
    taken.add(Measurement([1], [3.0]))     # a host executor's round: times, no timing
    whole = taken.combined()
    assert whole.times_us == [3.0] and whole.values == [] and whole.timing is None
    assert combine_rounds([]) is None
    assert combine_rounds([CaseSamples([1.0]), None]) is None


def test_a_first_case_that_fails_leaves_the_next_ones_every_round():
    backend = RoundTimes(fail={"shfl"})
    records, written = _run(_settings(rung="shfl,cub", rounds=3), backend)
    assert [r.rung for r in written] == ["shfl", "cub"]
    assert records[1].status == "ok" and records[1].rounds == 3


def test_progress_counts_every_case_of_every_round():
    seen = []
    run(_settings(rung="shfl,cub", rounds=2), RoundTimes(), lambda record: None,
        on_case=lambda case, index, total: seen.append((case.rung.name, index, total)))
    assert seen == [("shfl", 0, 4), ("cub", 1, 4), ("shfl", 2, 4), ("cub", 3, 4)]


def test_an_interruption_counts_only_cases_with_rounds_measured():
    from reducebench.core.interrupt import Interrupted

    class StopInThirdCase(RoundTimes):
        def execute(self, case, plan, handle, sampling):
            if case.rung.name == "single_pass":
                raise Interrupted(signal.SIGINT)
            return super().execute(case, plan, handle, sampling)

    with pytest.raises(Interrupted) as stopped:
        run(_settings(rung="shfl,shfl_xor,single_pass,pingpong", rounds=3), StopInThirdCase(),
            lambda record: None)
    # shfl and shfl_xor had their first round; single_pass was stopped in its first, and
    # pingpong never started
    assert stopped.value.unfinished == 2


def test_inputs_beyond_the_host_budget_are_drawn_again_each_round(monkeypatch):
    import reducebench.measuring.runner as runner

    drawn = []
    real = runner.case_inputs

    def counting(n, dtype, seed, kind, workers):
        drawn.append(n)
        return real(n, dtype, seed, kind, workers)

    monkeypatch.setattr(runner, "case_inputs", counting)
    # room for the first size's timed input only (2^10 float32: 4096 bytes)
    monkeypatch.setattr(runner, "HOST_CACHE_BYTES", 4096)
    backend = RoundTimes()
    _run(_settings(size="2^10,2^11", rung="shfl", rounds=3), backend)
    assert drawn == [1024, 2048, 2048, 2048]   # 2^11 is drawn again in rounds 2 and 3
    later = [u for u in backend.uploads if u.data.size == 2048][-2:]
    assert all((u.data == later[0].data).all() for u in later)


def test_a_read_that_fails_in_a_round_leaves_its_other_rounds_and_says_why():
    from reducebench.core.errors import CaseFailed

    class FailingRead(RoundTimes):
        reads = 0

        def read_reference_us(self, handle, n, itemsize, sampling):
            FailingRead.reads += 1
            if FailingRead.reads == 2:
                raise CaseFailed("the read kernel failed")
            return 8.0 + FailingRead.reads

    records, _ = _run(_settings(rung="shfl", rounds=3), FailingRead())
    # reads 9, (failed), 11: the median of the two that ran
    assert records[0].read_us == 10.0 and records[0].read_rounds_us == "9.0000;11.0000"
    assert "read reference: the read kernel failed" in records[0].note


class Recording(RoundTimes):
    """Warm-up, timing floor, reads and unverifying executions, each recorded."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.warmed, self.floors, self.reads, self.checks = 0, [], [], 0

    def warm_up(self):
        self.warmed += 1

    def timing_floor_us(self, sampling):
        self.floors.append(sampling)
        return 3.14159

    def read_reference_us(self, handle, n, itemsize, sampling):
        self.reads.append((handle, n))
        return 8.0

    def execute(self, case, plan, handle, sampling):
        self.checks += sampling is None
        return super().execute(case, plan, handle, sampling)


def test_a_timed_run_warms_up_once_and_records_the_timing_floor_to_a_nanosecond():
    backend = Recording()
    records, _ = _run(_settings(rung="shfl", rounds=2), backend)
    assert backend.warmed == 1 and len(backend.floors) == 1
    assert backend.floors[0].cold and backend.floors[0].hold   # timed as the cases are
    assert records[0].meta["timing_floor_us"] == 3.142
    checked = Recording()
    _run(_settings(rung="shfl", rounds=2, timed=False), checked)
    assert checked.warmed == 0 and checked.floors == [] and checked.reads == []


def test_the_other_inputs_verify_in_the_first_round_only_and_the_read_times_each_rounds_input():
    from reducebench.core.dtypes import DTYPES
    from reducebench.verify.inputs import exact_inputs

    backend = Recording()
    _run(_settings(size="2^20", rung="shfl", rounds=3), backend)
    k = len(exact_inputs(2**20, DTYPES["float32"]))
    assert backend.checks == k - 1
    # round 1 reads the first (timed) upload; rounds 2 and 3 the upload each made
    timed = [backend.handles[0], backend.handles[k], backend.handles[k + 1]]
    assert [id(h) for h, _ in backend.reads] == [id(h) for h in timed]


def test_a_case_that_failed_has_no_read_and_after_case_sees_only_verified_records():
    backend = Recording(wrong={"shfl": 1})
    seen = []
    run(_settings(rung="shfl,cub", rounds=2), backend, lambda record: None,
        after_case=lambda case, record: seen.append((case.rung.name, record.rung)))
    assert seen == [("cub", "cub")]
    only_failing = Recording(wrong={"shfl": 1})
    _run(_settings(rung="shfl", rounds=2), only_failing)
    assert only_failing.reads == []


def test_a_context_lost_while_reading_ends_the_run_with_the_case_written():
    from reducebench.core.errors import ContextLost

    class LostRead(Recording):
        def read_reference_us(self, handle, n, itemsize, sampling):
            raise ContextLost("an illegal memory access was encountered")

    written = []
    with pytest.raises(ContextLost):
        run(_settings(rung="shfl", rounds=2), LostRead(), written.append)
    assert written[0].status == "error"
    assert written[0].error == ("context lost: read reference: an illegal memory access "
                                "was encountered")


def test_the_host_budget_counts_every_kept_input(monkeypatch):
    import reducebench.measuring.runner as runner

    drawn = []
    real = runner.case_inputs

    def counting(n, dtype, seed, kind, workers):
        drawn.append(dtype.name)
        return real(n, dtype, seed, kind, workers)

    monkeypatch.setattr(runner, "case_inputs", counting)
    # 2^10 float32 (4096 bytes) and int32 (4096) fit in 10000; float16 (2048) then not
    monkeypatch.setattr(runner, "HOST_CACHE_BYTES", 10000)
    _run(_settings(size="2^10", dtype="float32,int32,float16", rung="shfl", rounds=2),
         RoundTimes())
    assert drawn == ["float32", "int32", "float16", "float16"]


def test_later_rounds_upload_the_timed_input_alone_when_drawn_again(monkeypatch):
    import reducebench.measuring.runner as runner

    monkeypatch.setattr(runner, "HOST_CACHE_BYTES", 0)
    backend = RoundTimes()
    _run(_settings(size="2^20", rung="shfl", rounds=3), backend)
    from reducebench.core.dtypes import DTYPES
    from reducebench.verify.inputs import exact_inputs

    assert len(backend.uploads) == len(exact_inputs(2**20, DTYPES["float32"])) + 2
