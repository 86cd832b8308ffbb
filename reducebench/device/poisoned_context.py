"""Errors after which the CUDA context is unusable: every later call would fail too, so
the run stops there (ContextLost) instead of recording a string of failures."""

from __future__ import annotations

# Driver (CUDA_ERROR_...) and runtime (cudaError...) spellings both occur.
STICKY_ERRORS = ("illegal address", "ILLEGAL_ADDRESS", "IllegalAddress",
                 "illegal memory access", "misaligned", "MISALIGNED", "Misaligned",
                 "LAUNCH_FAILED", "LaunchFailure", "unspecified launch failure",
                 "illegal instruction", "ILLEGAL_INSTRUCTION", "IllegalInstruction",
                 "hardware stack error", "ASSERT", "Assert")


def poisons_context(message: str) -> bool:
    return any(marker in message for marker in STICKY_ERRORS)
