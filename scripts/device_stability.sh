#!/usr/bin/env bash
# Issue #5's repeatability: cub measured again and again in one process, the placement
# probe, then three back-to-back default runs (per-rung max/min of the medians last).
source scripts/device_env.sh
W=/tmp/rb; mkdir -p $W/results; R=$W/results
echo "== cub repeats ($(date +%T))"
python3 scripts/cub_level_probe.py 2>&1 | tee $W/cub_level_probe.txt | cut -c1-80
echo "== placement probe"
python3 scripts/stability_probe.py 4 2>&1 | tee $W/stability_probe.txt
echo "== three default runs"
for i in 1 2 3; do
    /usr/bin/time -f "run $i wall %e s" python3 -m reducebench run --size 2^24 \
        --out $R/h100_default_f32_run$i.csv > $W/default_run$i.txt 2>&1
    tail -1 $W/default_run$i.txt
done
python3 - $R/h100_default_f32_run{1,2,3}.csv <<'PY' | tee $W/three_runs.txt
import sys, pandas as pd
runs = [pd.read_csv(p) for p in sys.argv[1:]]
m = pd.concat([r.set_index("rung")["median_us"].rename(f"run{i+1}") for i, r in enumerate(runs)], axis=1)
m["max/min"] = m.max(axis=1) / m.min(axis=1)
print(m.round(3).to_string())
print("worst max/min:", m["max/min"].idxmax(), round(m["max/min"].max(), 4))
PY
tar czf $OUT/bundle.tgz -C $W .
