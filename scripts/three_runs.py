"""Per-rung max/min of the medians of several results CSVs of the same run: issue #5's
repeatability check. Used by the device scripts; prints a table and the worst rung.

    python scripts/three_runs.py run1.csv run2.csv run3.csv
"""

import sys

import pandas as pd

runs = [pd.read_csv(path) for path in sys.argv[1:]]
medians = pd.concat([r.set_index("rung")["median_us"].rename(f"run{i + 1}")
                     for i, r in enumerate(runs)], axis=1)
medians["max/min"] = medians.max(axis=1) / medians.min(axis=1)
print(medians.round(3).to_string())
print("worst max/min:", medians["max/min"].idxmax(), round(medians["max/min"].max(), 4))
