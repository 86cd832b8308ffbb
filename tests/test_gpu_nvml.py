"""NVML and CUDA name the same GPU: the clocks beside each sample are read from the GPU
that runs the case, under any CUDA_VISIBLE_DEVICES, and every GPU has its UUID."""

import pytest

pytestmark = pytest.mark.gpu


def test_the_clocks_are_read_from_the_gpu_that_runs_the_case():
    pynvml = pytest.importorskip("pynvml")
    from reducebench.device import open_backend

    backend = open_backend(0)
    assert backend.info.uuid.startswith("GPU-"), backend.info.uuid
    if backend.nvml.handle is None:
        pytest.skip("NVML gives no readings here")
    uuid = pynvml.nvmlDeviceGetUUID(backend.nvml.handle)
    uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
    assert uuid == backend.info.uuid
