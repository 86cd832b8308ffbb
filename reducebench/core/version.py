"""The version of reducebench, recorded in every results row."""

__version__ = "0.1.0"
