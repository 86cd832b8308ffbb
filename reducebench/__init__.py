"""reducebench: compile, verify and time the CUDA sum-reduction ladder next to CUB."""

__version__ = "0.1.0"
