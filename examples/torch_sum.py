"""Worked examples of PyTorch reductions for `reducebench run --callable`
(docs/callables.md): torch.sum, and the same sum compiled by torch.compile (which writes
and tunes a Triton kernel for it), measured next to the ladder, CUB and torch.

    reducebench run --size 2^24 --rung pingpong,cub,torch \
        --callable examples/torch_sum.py:torch_sum \
        --callable examples/torch_sum.py:compiled_sum

The contract they follow: one required parameter, the input, which arrives as a torch
tensor on the GPU (through DLPack, no copy; bfloat16 input as torch.bfloat16) because
each declares framework="torch", here as a parameter default that reducebench reads and
never passes, or as an attribute where the function is not a plain def (compiled_sum).
They run on reducebench's stream (a torch external stream made current around the call),
and return the sum as a 0-d tensor of the accumulator type: float32 for float16 and
bfloat16 input, the input's own type otherwise. torch.sum of int32 would return int64,
so the dtype is always given.

torch.compile compiles on the first call of each dtype and size (in the untimed warm-up
runs); later sizes may trigger one more compile for dynamic shapes.

torch_row_sum is torch.sum(x, dim=1) for `reducebench run --shape` (docs/rows.md): it
receives the ROWS x COLS tensor and returns each row's sum, a 1-D tensor of ROWS values of
the accumulator type."""

import torch

HALF_TYPES = (torch.float16, torch.bfloat16)


def accumulator(x: torch.Tensor) -> torch.dtype:
    return torch.float32 if x.dtype in HALF_TYPES else x.dtype


def torch_sum(x, framework="torch"):
    return torch.sum(x, dtype=accumulator(x))


def torch_row_sum(x, framework="torch"):
    return torch.sum(x, dim=1, dtype=accumulator(x))


@torch.compile
def _compiled(x, dtype: torch.dtype):
    return torch.sum(x, dtype=dtype)


def compiled_sum(x):
    return _compiled(x, accumulator(x))


compiled_sum.framework = "torch"
