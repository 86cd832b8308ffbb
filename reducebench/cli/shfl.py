"""Registers `reducebench shfl`, which lives in reducebench.shfl.cli."""

from reducebench.shfl.cli import COMMANDS  # noqa: F401
