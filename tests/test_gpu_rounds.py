"""Rounds on a GPU: every round a fresh flush buffer and input, each round's median and
the same-size read's kept on the row, and the one sampler timing every path."""

import pytest

from reducebench.measuring.runner import run
from reducebench.measuring.settings import settings_from
from reducebench.results.schema import parse_medians

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


def test_a_new_round_flushes_through_a_new_buffer(backend):
    before = backend.timer.flush_buffer.data.ptr
    backend.new_round()
    assert backend.timer.flush_buffer.data.ptr != before


def test_a_run_in_three_rounds_keeps_three_medians_of_each_case_and_of_the_read(backend):
    uploads = []
    upload = backend.upload

    def recording_upload(host):
        handle = upload(host)
        uploads.append(handle.data.ptr)
        return handle

    backend.upload = recording_upload
    try:
        settings = settings_from({"size": "2^20", "rung": "vector_load,cub", "seed": 2,
                                  "max_time": 0.15, "rounds": 3})
        records = run(settings, backend, lambda record: None)
    finally:
        del backend.upload
    assert [r.status for r in records] == ["ok", "ok"]
    for r in records:
        assert r.rounds == 3 and len(parse_medians(r.round_medians_us)) == 3
        assert len(parse_medians(r.read_rounds_us)) == 3
        assert set(r.raw_samples.rounds) == {0, 1, 2}
    # the later rounds' timed inputs were uploaded anew, each beside the last: no two
    # consecutive rounds read the same address
    timed = uploads[-3:]
    assert timed[0] != timed[1] and timed[1] != timed[2]
