#!/usr/bin/env bash
# The second session's acceptance run, after the pingpong rung: every GPU test, three
# back-to-back default runs (the first from an empty kernel cache), the headline sizes
# with the example user kernel, the memset probe, compute-sanitizer on what is new.
source scripts/device_env.sh
W=/tmp/rb; mkdir -p $W/results; R=$W/results
EX="--kernel examples/grid_stride_sum.cu:grid_stride_sum --finish atomic --grid per-sm=8"
stage() { echo "== $1 ($(date +%T))"; }
stage "gpu tests"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ 2>&1 | tee $W/pytest_gpu.log | tail -1
stage "default run x3, the first from an empty kernel cache"
rm -rf ~/.cupy/kernel_cache
three_default_runs
tail -8 $W/three_runs.txt
stage "headline with the example kernel"
python3 -m reducebench run --size 2^20,2^24,2^28,2^30 --dtype float32,int32 \
    --rung gridstride_atomic,vector_load,single_pass,pingpong,cub,torch $EX \
    --out $R/h100_headline.csv > $W/headline.txt 2>&1; echo "rc=$?"
python3 -m reducebench run --size 2^24 --dtype float16,bfloat16 \
    --rung vector_load,pingpong,torch $EX --out $R/h100_half.csv > $W/half.txt 2>&1
echo "rc=$?"
stage "memset probe"
python3 scripts/memset_cost_probe.py 2>&1 | tee $W/memset_cost_probe.txt
stage "sanitize"
python3 -m reducebench sanitize --size 1000003 --rung pingpong $EX \
    --out $R/h100_sanitize_session2.md 2>&1 | tail -8
python3 scripts/bench_tables.py $R/h100_headline.csv --headline 2>&1 | tail -10
tar czf $OUT/bundle.tgz -C $W .
