"""Correctness: the inputs, tolerances, the verdict on a case's values, and compute-sanitizer reports."""
