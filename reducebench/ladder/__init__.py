"""The ladder as data: rungs, their plans and launch geometry, kernel sources, the user's kernels and callables, and what `auto` resolves to."""
