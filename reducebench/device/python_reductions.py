"""The device half of Python reductions: a user's callable (reducebench/callables.py) and
the Triton references (reducebench/triton_sum.py), bound to reducebench's input and
stream, measured by the same run_case and SampleTimer as every rung.

Streams, per framework. The timer holds reducebench's stream while a sample is
enqueued, so that only GPU work sits between its start and stop events, which works for
a function that only enqueues work and returns the device array:
- cupy: the function runs with reducebench's stream current; CuPy launches there.
- torch (and Triton, which launches on torch's current stream): inside
  torch.cuda.stream(ExternalStream(our stream)).
- jax: JAX cannot be told a stream; it runs its work on its own. A held stream would not
  hold it, and events on our stream would not bracket it. So its executions say
  stream_ordered = False (the backend then samples without the hold), and each call
  first waits for our stream (the L2 flush and the start event), then calls the function
  and blocks until its result is ready. The interval from start to stop event therefore
  includes the host's part: waking from the sync, the Python call, JAX's dispatch and
  the wait for the result. It is an upper bound on the device time, and its floor is
  that of an empty JAX call, not the empty kernel of `reducebench info`.
- a function that returns a host number (it called .item() or .get()) has waited for the
  GPU inside the call: held, it would wait for the hold until that times out. Its
  samples run unheld, and their time includes the copy back and the host's wait."""

from __future__ import annotations

import os

from reducebench.ladder.user_callables import (UserCallable, failure_message, is_host_value,
                                               result_value, row_values)
from reducebench.ladder.registry import ROWS
from reducebench.ladder.plan import poison_value
from reducebench.device.poisoned_context import poisons_context
from reducebench.core.dtypes import DType
from reducebench.core.errors import CaseFailed, CaseSkipped, ContextLost
from reducebench.ladder.case import Case



class CallableExecution:
    """A user's function as an Execution (execution.py): prepare, poison, enqueue, read."""

    # Read by the backend's graph timing, which then skips the case with this reason.
    not_capturable = ("a Python callable allocates its result in every call, and memory "
                      "allocated while a CUDA graph is captured is reused while it replays")

    def __init__(self, cupy, case: Case, x) -> None:
        self.user: UserCallable = case.rung.callable_ref
        self.acc_name = case.dtype.acc_name
        self.rows = case.rows if case.rung.finish == ROWS else 0
        if self.rows:  # a row function gets the input as ROWS x COLS: a view, no copy
            x = x.reshape(case.rows, case.cols)
        self.stream = cupy.cuda.get_current_stream()
        self.framework = FRAMEWORK_ARGUMENTS[self.user.framework](cupy, x, case.dtype,
                                                                  self.stream)
        self.stream_ordered = self.framework.stream_ordered
        self.out = None

    def prepare(self) -> None:
        pass

    def poison(self) -> None:
        self.out = None  # a run that does not return a new value cannot pass for one

    def enqueue(self) -> None:
        try:
            self.out = self.framework.call(self.user.function)
        except Exception as exc:
            raise _case_error(failure_message(exc, self.user)) from None
        if is_host_value(self.out):
            # It waited for its own result, which a held stream would never give it
            # (the hold would time out): from the warm-up on, its samples run unheld.
            self.stream_ordered = False

    def read(self) -> float | int:
        try:
            self.stream.synchronize()  # our stream: torch reads on its own default one
            if self.rows:
                return row_values(self.out, self.acc_name, self.user.name, self.rows)
            return result_value(self.out, self.acc_name, self.user.name)
        except (CaseFailed, ContextLost):
            raise
        except Exception as exc:  # an asynchronous error of the user's work shows here
            raise _case_error(f"after {self.user.name} returned: {type(exc).__name__}: "
                              f"{_first_line(exc)}") from None

    def check_guards(self) -> list[str]:
        return []  # the user's function allocates its own buffers


# -- how each framework receives the input ---------------------------------------------

class CupyArgument:
    stream_ordered = True

    def __init__(self, cupy, x, dtype: DType, stream) -> None:
        if dtype.name == "bfloat16":
            raise CaseSkipped("CuPy has no bfloat16; declare framework=\"torch\" or \"jax\" "
                              "to receive this input")
        self.argument, self.stream = x, stream

    def call(self, function):
        # use(), not `with self.stream:`. The backend makes its stream current with use();
        # leaving a `with` block over that same stream left CuPy's current stream at the
        # null stream (CuPy 14), so the next sample's hold went there and held nothing.
        self.stream.use()
        return function(self.argument)


class TorchArgument:
    """The input through DLPack, no copy; bfloat16 bits viewed as torch.bfloat16."""

    stream_ordered = True

    def __init__(self, cupy, x, dtype: DType, stream) -> None:
        torch = import_torch()
        self.torch, self.argument = torch, torch_view(torch, x, dtype)
        self.stream = torch.cuda.ExternalStream(stream.ptr, device=self.argument.device)

    def call(self, function):
        with self.torch.cuda.stream(self.stream):
            return function(self.argument)


class JaxArgument:
    """The input through DLPack; JAX's work runs on JAX's own stream (module docstring)."""

    stream_ordered = False

    def __init__(self, cupy, x, dtype: DType, stream) -> None:
        # JAX takes 75% of the GPU's memory at its first use unless told otherwise; the
        # user's own setting wins.
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        try:
            import jax
            import jax.numpy as jnp
        except ImportError:
            raise CaseSkipped("JAX is not installed") from None
        x64 = jax.dtypes.canonicalize_dtype(jnp.float64) == jnp.float64
        if dtype.name == "float64" and not x64:
            raise CaseSkipped("JAX runs with float64 disabled; set JAX_ENABLE_X64=1 to give "
                              "it float64 input")
        stream.synchronize()
        array = jax.dlpack.from_dlpack(x)
        if dtype.name == "bfloat16":  # a copy, once, outside any timing
            array = jax.lax.bitcast_convert_type(array, jnp.bfloat16)
        self.jax, self.argument, self.stream = jax, jax.block_until_ready(array), stream

    def call(self, function):
        self.stream.synchronize()  # JAX cannot wait on our stream: the flush ends first
        return self.jax.block_until_ready(function(self.argument))


FRAMEWORK_ARGUMENTS = {"cupy": CupyArgument, "torch": TorchArgument, "jax": JaxArgument}


def import_torch():
    try:
        import torch
    except ImportError:
        raise CaseSkipped("PyTorch is not installed") from None
    return torch


def torch_view(torch, x, dtype: DType):
    tensor = torch.from_dlpack(x)
    return tensor.view(torch.bfloat16) if dtype.name == "bfloat16" else tensor


# -- the Triton references (registry rungs triton_atomic, triton_two_pass, triton_rows) ---

class TritonSum:
    """A Triton reduction on the input, on our stream through torch's external stream;
    a library in the sense of device/references.py: enqueue(), read(), and `out`, which
    LibraryExecution sets to None to poison it (that poisons our result buffer too)."""

    def __init__(self, cupy, x, dtype: DType) -> None:
        try:
            import triton  # noqa: F401

            from reducebench.device import triton_sum
        except ImportError:
            raise CaseSkipped("Triton is not installed") from None
        torch = import_torch()
        self.cupy, self.kernels, self.torch = cupy, triton_sum, torch
        self.stream = cupy.cuda.get_current_stream()
        self.x = torch_view(torch, x, dtype)
        acc = cupy.dtype(dtype.acc_name)
        # Our buffers, viewed by torch, so that the atomic rung's accumulator is zeroed
        # with cudaMemsetAsync like the CUDA atomic rungs' (torch would launch a fill).
        self.result = cupy.empty(self.outputs(x), dtype=acc)
        self.torch_result = torch.from_dlpack(self.result)
        self.allocate(cupy, x, acc)
        self.torch_stream = torch.cuda.ExternalStream(self.stream.ptr, device=self.x.device)
        self._out = None

    def outputs(self, x) -> int:
        """The values it leaves in `result`: one."""
        return 1

    def allocate(self, cupy, x, acc) -> None:
        """The grid, and a partial sum a program."""
        sm_count = cupy.cuda.Device().attributes["MultiProcessorCount"]
        self.grid = self.kernels.programs(x.size, sm_count)
        self.partials = cupy.empty(self.grid, dtype=acc)
        self.torch_partials = self.torch.from_dlpack(self.partials)

    @property
    def out(self):
        return self._out

    @out.setter
    def out(self, value) -> None:
        if value is None:  # poisoned: a kernel that writes nothing cannot pass
            self.result.fill(poison_value(self.result.dtype.kind == "f"))
        self._out = value

    def enqueue(self) -> None:
        with self.torch.cuda.stream(self.torch_stream):
            self.launch()
        self._out = self.result

    def launch(self) -> None:
        raise NotImplementedError

    def read(self) -> float | int:
        self.stream.synchronize()
        return self.result.get()[0].item()


class TritonAtomicSum(TritonSum):
    def launch(self) -> None:
        self.cupy.cuda.runtime.memsetAsync(self.result.data.ptr, 0, self.result.nbytes,
                                           self.stream.ptr)
        self.kernels.launch_atomic(self.x, self.torch_result, self.grid)


class TritonTwoPassSum(TritonSum):
    def launch(self) -> None:
        self.kernels.launch_two_pass(self.x, self.torch_partials, self.torch_result, self.grid)


class TritonRowSums(TritonSum):
    """Rung triton_rows: the input arrives as ROWS x COLS; `result` holds one accumulator
    a row (every one poisoned before a verified run), read back as a numpy array."""

    def outputs(self, x) -> int:
        return x.shape[0]

    def allocate(self, cupy, x, acc) -> None:
        self.rows, self.cols = x.shape

    def launch(self) -> None:
        self.kernels.launch_rows(self.x, self.torch_result, self.rows, self.cols)

    def read(self):
        self.stream.synchronize()
        return self.result.get()


# -- errors -------------------------------------------------------------------------------

def _case_error(message: str) -> Exception:
    """CaseFailed, or ContextLost when the error is one that leaves the context unusable
    (the user's kernel read out of bounds): then nothing more can run."""
    if poisons_context(message):
        return ContextLost(message)
    return CaseFailed(message)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
