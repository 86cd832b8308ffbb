"""The number formatter, for the modules of cli/ that import it from here: it lives in
core/numbers.py, where every layer can reach it."""

from reducebench.core.numbers import MISSING, number

__all__ = ["MISSING", "number"]
