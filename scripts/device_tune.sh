#!/usr/bin/env bash
# Tuning the fast rungs' knobs (see docs/performance.md): a sweep over blocks per SM,
# loads in flight and the L2 prefetch hint at 2^20, 2^24 and 2^28, next to cub.
source scripts/device_env.sh
W=/tmp/rb; rm -rf $W; mkdir -p $W/results
python3 -m reducebench run --size 2^20,2^24,2^28 --rung vector_load,single_pass,cub \
    --param blocks_per_sm=1,2,4,8 --param loads=4,8 --param l2_prefetch=0,1 --max-time 0.3 \
    --out $W/results/h100_tune.csv > $W/tune.txt 2>&1
python3 - $W/results/h100_tune.csv <<'PY'
import sys, pandas as pd
d = pd.read_csv(sys.argv[1])
d = d[d.status == "ok"]
for n, g in d.groupby("n"):
    cub = g[g.rung == "cub"].median_us.min()
    print(f"n={n} cub={cub:.2f} us")
    print(g[g.rung != "cub"].sort_values("median_us")[["rung", "params", "median_us", "noise_pct", "gbps"]].head(8).to_string(index=False))
PY
tar -czf $OUT/bundle.tgz -C $W .
