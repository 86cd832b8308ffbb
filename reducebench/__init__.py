"""reducebench: compile, verify and time the CUDA sum-reduction ladder next to CUB."""

from reducebench.core.version import __version__

__all__ = ["__version__", "measure", "Result"]


def __getattr__(name: str):
    """reducebench.measure and reducebench.Result (api.py), imported on first use so that
    `import reducebench` stays light and device-free."""
    if name in ("measure", "Result"):
        from reducebench import api

        return getattr(api, name)
    raise AttributeError(f"module 'reducebench' has no attribute {name!r}")
