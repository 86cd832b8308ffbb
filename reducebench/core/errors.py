"""Exceptions that the CLI turns into one clear line and an exit code, never a traceback."""


class ReducebenchError(Exception):
    """A problem the user can fix; the message is shown as is."""

    exit_code = 2


class UsageError(ReducebenchError):
    """A bad option, size, dtype, rung, block size or config value."""


class DeviceUnavailable(ReducebenchError):
    """No GPU, no driver, or no CuPy."""


class OutOfDeviceMemory(ReducebenchError):
    """The buffers a case needs do not fit in free device memory."""


class ResultsFileError(ReducebenchError):
    """A results CSV that is missing, malformed or of another schema version."""


class CaseSkipped(Exception):
    """The case cannot run here (e.g. PyTorch not installed); not a failure."""


class CaseFailed(Exception):
    """Compile error, CUDA error or refusal in one case; the run goes on."""


class ContextLost(Exception):
    """A CUDA error that poisons the context (illegal address): nothing more can run."""
