"""The libraries a user would otherwise call, measured exactly like the rungs."""

from __future__ import annotations

from reducebench.device.python_reductions import (TritonAtomicSum, TritonRowSums,
                                                   TritonTwoPassSum)
from reducebench.core.dtypes import DType
from reducebench.core.errors import CaseSkipped


class CubSum:
    """cub::DeviceReduce::Sum through CuPy's CUB binding, called directly so that a
    silent fall-back to another kernel can never be reported as CUB."""

    def __init__(self, cupy, x, dtype: DType) -> None:
        from cupy.cuda import cub

        self._cub, self.x, self.out = cub, x, None
        if x.size > 0x7FFFFFFF:
            raise CaseSkipped("CuPy's CUB binding takes at most 2^31-1 elements")
        if dtype.name == "bfloat16":
            raise CaseSkipped("CuPy's CUB binding has no bfloat16")

    def enqueue(self) -> None:
        # CUB sums in the input type: dtype=x.dtype is what CuPy's binding offers.
        self.out = self._cub.cub_reduction(self.x, self._cub.CUPY_CUB_SUM, dtype=self.x.dtype)
        if self.out is None:
            raise CaseSkipped(f"CuPy's CUB binding cannot sum {self.x.dtype}")

    def read(self) -> float:
        return self.out.item()


class CubRowSums:
    """cub::DeviceSegmentedReduce::Sum through CuPy's CUB binding: the input arrives as
    ROWS x COLS, each row a segment of COLS elements, summed over axis 1 in the input
    type (the accumulator of the dtypes the registry gives it). Called directly, as
    CubSum is: where the binding cannot do it, it returns None and the case is skipped,
    never measured on another kernel."""

    def __init__(self, cupy, x, dtype: DType) -> None:
        try:
            from cupy.cuda import cub
        except ImportError:
            raise CaseSkipped("this CuPy has no CUB (cupy.cuda.cub does not import)") from None
        if x.size > 0x7FFFFFFF:
            raise CaseSkipped("CuPy's CUB binding takes at most 2^31-1 elements")
        self._cub, self.x, self.out = cub, x, None

    def enqueue(self) -> None:
        self.out = self._cub.cub_reduction(self.x, self._cub.CUPY_CUB_SUM, axis=1,
                                           dtype=self.x.dtype)
        if self.out is None:
            raise CaseSkipped(f"CuPy's CUB binding has no segmented sum of {self.x.dtype} "
                              "rows here")

    def read(self):
        return self.out.get()


class CupySum:
    """CuPy's own reduction kernel (CUB accelerators off), accumulating in Acc."""

    def __init__(self, cupy, x, dtype: DType) -> None:
        from cupy._core import _accelerator

        if dtype.name == "bfloat16":
            raise CaseSkipped("CuPy has no bfloat16 dtype")
        self.cupy, self.x, self.out, self._acc = cupy, x, None, _accelerator
        self.acc_dtype = cupy.dtype(dtype.acc_name)

    def enqueue(self) -> None:
        acc = self._acc
        saved = acc.get_routine_accelerators(), acc.get_reduction_accelerators()
        acc.set_routine_accelerators([])
        acc.set_reduction_accelerators([])
        try:
            self.out = self.cupy.sum(self.x, dtype=self.acc_dtype)
        finally:
            acc.set_routine_accelerators(saved[0])
            acc.set_reduction_accelerators(saved[1])

    def read(self) -> float:
        return self.out.item()


class TorchSum:
    """torch.sum on the same device buffer (zero copy through DLPack), on our stream."""

    def __init__(self, cupy, x, dtype: DType) -> None:
        try:
            import torch
        except ImportError:
            raise CaseSkipped("PyTorch is not installed") from None
        self.torch = torch
        tensor = torch.from_dlpack(x)
        if dtype.name == "bfloat16":
            tensor = tensor.view(torch.bfloat16)
        self.tensor = tensor
        self.acc = getattr(torch, dtype.acc_name)
        self.stream = torch.cuda.ExternalStream(cupy.cuda.get_current_stream().ptr)
        self.out = None

    def enqueue(self) -> None:
        with self.torch.cuda.stream(self.stream):
            self.out = self.torch.sum(self.tensor, dtype=self.acc)

    def read(self) -> float:
        return self.out.item()


class TorchRowSums(TorchSum):
    """torch.sum(x, dim=1) over the input viewed as ROWS x COLS (x arrives 2-D): one value
    a row, read back as a numpy array."""

    def enqueue(self) -> None:
        with self.torch.cuda.stream(self.stream):
            self.out = self.torch.sum(self.tensor, dim=1, dtype=self.acc)

    def read(self):
        return self.out.cpu().numpy()


LIBRARIES = {"cub": CubSum, "cupy": CupySum, "torch": TorchSum, "torch_rows": TorchRowSums,
             "triton_atomic": TritonAtomicSum, "triton_two_pass": TritonTwoPassSum,
             "cub_rows": CubRowSums, "triton_rows": TritonRowSums}
