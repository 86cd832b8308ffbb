"""The vocabulary every layer shares and needs nothing else: errors, dtypes, sizes, statistics, signals."""
