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
three_default_runs
cat $W/three_runs.txt
tar czf $OUT/bundle.tgz -C $W .
