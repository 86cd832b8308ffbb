"""What the GPU is: properties, versions, theoretical bandwidth and clocks."""

from __future__ import annotations

from dataclasses import dataclass

# cudaDeviceAttr values (stable across CUDA versions)
ATTR_MEMORY_CLOCK_KHZ = 36
ATTR_MEMORY_BUS_WIDTH = 37


@dataclass
class GpuInfo:
    index: int
    name: str
    compute_capability: str
    sm_count: int
    l2_bytes: int
    total_memory: int
    memory_clock_khz: int
    bus_width_bits: int
    driver: str
    runtime: str
    cupy: str
    uuid: str = ""          # GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, as nvidia-smi -L shows it

    @property
    def peak_gbps(self) -> float:
        """Double data rate: two transfers per memory clock across the whole bus."""
        return 2 * self.memory_clock_khz * 1e3 * self.bus_width_bits / 8 / 1e9


def _version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def query(cupy, index: int) -> GpuInfo:
    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(index)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    clock = props.get("memoryClockRate") or _attribute(rt, ATTR_MEMORY_CLOCK_KHZ, index)
    bus = props.get("memoryBusWidth") or _attribute(rt, ATTR_MEMORY_BUS_WIDTH, index)
    if not clock or not bus:
        clock, bus = _nvml_memory(index)
    uuid = format_uuid(props.get("uuid")) or _nvml_uuid(pci_bus_id(cupy, index))
    return GpuInfo(index, name, f"{props['major']}.{props['minor']}",
                   int(props["multiProcessorCount"]), int(props["l2CacheSize"]),
                   int(props["totalGlobalMem"]), int(clock or 0), int(bus or 0),
                   _version(rt.driverGetVersion()), _version(rt.runtimeGetVersion()),
                   cupy.__version__, uuid)


def pci_bus_id(cupy, index: int) -> str:
    """The device's PCI bus id (0000:3B:00.0): the same device to CUDA and NVML under
    any CUDA_VISIBLE_DEVICES; empty where the binding cannot say."""
    try:
        return str(cupy.cuda.runtime.deviceGetPCIBusId(index))
    except Exception:
        return ""


def _nvml_handle_by_bus(pynvml, bus_id: str):
    for key in (bus_id, bus_id.encode()) if bus_id else ():
        for call in ("nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId"):
            try:
                return getattr(pynvml, call)(key)
            except Exception:  # another binding's argument type or name
                continue
    return None


def _nvml_uuid(bus_id: str) -> str:
    """NVML's name for the GPU at bus_id, where CUDA's properties lost it (a binding that
    reads the 16 UUID bytes as a C string stops at a zero byte)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = _nvml_handle_by_bus(pynvml, bus_id)
        uuid = pynvml.nvmlDeviceGetUUID(handle) if handle is not None else ""
        return uuid.decode() if isinstance(uuid, bytes) else str(uuid or "")
    except Exception:
        return ""


def format_uuid(raw) -> str:
    """The 16 bytes of cudaDeviceProp.uuid as nvidia-smi writes them (the same string
    under any CUDA_VISIBLE_DEVICES: how a row names its GPU across a fleet); "" where the
    binding does not give them."""
    if isinstance(raw, str):
        raw = raw.encode("latin-1")
    if not isinstance(raw, (bytes, bytearray)) or len(raw) < 16:
        return ""
    h = bytes(raw[:16]).hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _attribute(rt, attr: int, index: int) -> int:
    try:
        return int(rt.deviceGetAttribute(attr, index))
    except Exception:
        return 0


def _nvml_memory(index: int) -> tuple[int, int]:
    try:
        import pynvml

        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
        return mhz * 1000, pynvml.nvmlDeviceGetMemoryBusWidth(handle)
    except Exception:
        return 0, 0


class Nvml:
    """What NVML tells about the GPU while it runs: the SM and memory clocks, and the
    total energy counter (millijoules). Each read is None where NVML is missing or the
    GPU does not report it, so measuring never depends on NVML."""

    def __init__(self, index: int, bus_id: str = "") -> None:
        """The GPU by its PCI bus id where known: NVML numbers every GPU of the host, CUDA
        only those CUDA_VISIBLE_DEVICES shows, so CUDA's device 0 may be NVML's 1."""
        self.handle = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._pynvml = pynvml
            self.handle = (_nvml_handle_by_bus(pynvml, bus_id)
                           or pynvml.nvmlDeviceGetHandleByIndex(index))
        except Exception:  # no nvidia-ml-py, no driver library: no readings
            self.handle = None

    def _read(self, call, *args) -> float | None:
        if self.handle is None:
            return None
        try:
            return float(call(self.handle, *args))
        except Exception:  # a reading the GPU does not support
            return None

    def sm_mhz(self) -> float | None:
        if self.handle is None:
            return None
        return self._read(self._pynvml.nvmlDeviceGetClockInfo, self._pynvml.NVML_CLOCK_SM)

    def mem_mhz(self) -> float | None:
        if self.handle is None:
            return None
        return self._read(self._pynvml.nvmlDeviceGetClockInfo, self._pynvml.NVML_CLOCK_MEM)

    def energy_mj(self) -> float | None:
        if self.handle is None:
            return None
        return self._read(self._pynvml.nvmlDeviceGetTotalEnergyConsumption)

    def power_mw(self) -> float | None:
        if self.handle is None:
            return None
        return self._read(self._pynvml.nvmlDeviceGetPowerUsage)


def device_info(info: GpuInfo) -> dict:
    """The device facts every results row records (results.DEVICE_FIELDS)."""
    return {"device": info.index, "gpu": info.name, "gpu_uuid": info.uuid,
            "compute_capability": info.compute_capability,
            "sm_count": info.sm_count, "l2_bytes": info.l2_bytes,
            "peak_gbps": round(info.peak_gbps, 1), "driver": info.driver,
            "runtime": info.runtime, "cupy": info.cupy}
