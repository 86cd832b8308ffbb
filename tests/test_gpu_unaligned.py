"""On the GPU: the 16-byte vector rungs sum an input that does not start on a 16-byte
boundary (a view one or three elements into an allocation, as a caller's slice would
be). Their head, the elements before the first boundary that block 0 reads one by one,
is otherwise never exercised: every buffer reducebench allocates is aligned."""

import pytest

from reducebench.core.dtypes import DTYPES
from reducebench.ladder.case import Case
from reducebench.ladder.registry import LADDER

from gpu_support import check_cases, failures

pytestmark = pytest.mark.gpu

VECTOR_RUNGS = ("vector_load", "single_pass", "pingpong", "one_block", "one_shot")
SIZES = (1, 31, 1000, 2**20 + 3)


class OffsetUploads:
    """The real backend, but each input lands `offset` elements into a larger buffer and
    the kernels get the view that starts there."""

    def __init__(self, backend, offset: int) -> None:
        self.backend, self.offset = backend, offset

    def __getattr__(self, name):
        return getattr(self.backend, name)

    def upload(self, host):
        cupy, stream = self.backend.cupy, self.backend.stream
        stream.use()
        whole = cupy.empty(host.data.size + self.offset, dtype=host.data.dtype)
        whole[self.offset:] = cupy.asarray(host.data)
        view = whole[self.offset:]
        stream.synchronize()
        assert view.data.ptr % 16 != 0  # the point of the test
        return view


@pytest.fixture(scope="module")
def backend():
    from reducebench.device import open_backend

    return open_backend(0)


@pytest.mark.parametrize("offset", [1, 3])
@pytest.mark.parametrize("dtype_name", ["float32", "int32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("rung_name", VECTOR_RUNGS)
def test_a_vector_rung_sums_an_input_that_starts_off_a_16_byte_boundary(backend, rung_name,
                                                                         dtype_name, offset):
    rung = LADDER[rung_name]
    if dtype_name not in rung.dtypes:
        pytest.skip(f"{rung_name} does not take {dtype_name}")
    cases = [Case(rung, DTYPES[dtype_name], n, 256, dict(rung.params)) for n in SIZES]
    records = check_cases(OffsetUploads(backend, offset), cases)
    assert not failures(records), "\n".join(failures(records))
