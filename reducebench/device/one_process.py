"""k GPUs of one host driven by one process (docs/multi-gpu.md has the method): the
launch adapter of device/nccl_cases.py, which measures the cases.

One process, one thread, every device: NCCL communicators from ncclCommInitAll
(NcclCommunicator.initAll), and every collective issued for all ranks between
ncclGroupStart and ncclGroupEnd, as NCCL requires when one thread drives several
devices. No launcher, no second process: the streams of all devices are held by the
harness's spin kernel while the one thread enqueues, so the order in which it visits the
devices never shows in a time."""

from __future__ import annotations

import contextlib

from reducebench.core.errors import CaseFailed
from reducebench.device.driver import import_cupy
from reducebench.device.gpu import device_info, query
from reducebench.device.nccl_cases import NcclCases, Rank, describe, load_nccl, nccl_version


class Session(NcclCases):
    """Devices 0..k-1 with one NCCL communicator each, all driven by this thread: every
    value is at hand, and every wait is the stream's own synchronize."""

    grouped = True

    def __init__(self, cupy, nccl, infos: list) -> None:
        comms = nccl.NcclCommunicator.initAll([info.index for info in infos])
        ranks = [Rank(cupy, r, info, comm) for r, (info, comm) in enumerate(zip(infos, comms))]
        super().__init__(cupy, nccl, len(infos), ranks)

    def _wait(self, r: Rank, what: str) -> None:
        with self.cupy.cuda.Device(r.device):
            r.stream.synchronize()

    def _allgather(self, values: list, what: str) -> list:
        return list(values)


class DeviceMultiGpu:
    """The runner's MultiGpuBackend: the GPUs present, NCCL, and one Session per k."""

    def __init__(self) -> None:
        self.cupy = import_cupy()
        self.count = int(self.cupy.cuda.runtime.getDeviceCount())
        self.infos = [query(self.cupy, index) for index in range(self.count)]
        self.nccl, self._reason = load_nccl()
        self._sessions: dict[int, Session] = {}

    def present(self) -> int:
        return self.count

    def unavailable_reason(self) -> str | None:
        return self._reason

    def device_info(self) -> dict:
        # GPU 0's facts; no single device index: each row names its GPUs in `devices`
        return {**device_info(self.infos[0]), "device": ""}

    def devices(self, k: int) -> str:
        return ";".join(f"{info.index}:{info.name}" for info in self.infos[:k])

    def nccl_version(self) -> str:
        return nccl_version(self.nccl)

    def session(self, k: int) -> Session:
        if k not in self._sessions:
            try:
                self._sessions[k] = Session(self.cupy, self.nccl, self.infos[:k])
            except Exception as exc:
                raise CaseFailed(f"setting up {k} GPU(s) with NCCL failed: "
                                 f"{describe(exc)}") from None
        return self._sessions[k]

    def close(self) -> None:
        for session in self._sessions.values():
            with contextlib.suppress(Exception):
                session.close()
        self._sessions.clear()


def open_multigpu() -> DeviceMultiGpu:
    return DeviceMultiGpu()
