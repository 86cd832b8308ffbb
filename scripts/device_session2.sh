#!/usr/bin/env bash
# Second-session acceptance. Part a: every GPU test, then three back-to-back default
# runs (the first from an empty kernel cache). Part b: the headline sizes with the
# example user kernel, cub's call-parity probes. Bundles everything into $OUT.
source scripts/device_env.sh
W=/tmp/rb; mkdir -p $W/results; R=$W/results
EX="--kernel examples/grid_stride_sum.cu:grid_stride_sum --finish atomic --grid per-sm=8"
stage() { echo "== $1 ($(date +%T))"; }
PART=${1:-a}
if [ "$PART" = a ]; then
stage "gpu tests"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ 2>&1 | tee $W/pytest_gpu.log | tail -2
stage "default run x3, the first from an empty kernel cache"
rm -rf ~/.cupy/kernel_cache
three_default_runs
cat $W/three_runs.txt
else
stage "headline with the example kernel"
python3 -m reducebench run --size 2^20,2^24,2^28,2^30 --dtype float32,int32 \
    --rung gridstride_atomic,vector_load,single_pass,cub,torch $EX \
    --out $R/h100_headline.csv > $W/headline.txt 2>&1; echo "rc=$?"
stage "cub parity probes"
python3 scripts/cub_parity_probe.py > $W/cub_parity_probe.txt 2>&1
python3 scripts/cub_level_probe.py 2>&1 | cut -c1-70 | tee $W/cub_level_probe.txt
python3 scripts/bench_tables.py $R/h100_headline.csv --headline 2>&1 | tail -25
fi
tar czf $OUT/bundle.tgz -C $W .
