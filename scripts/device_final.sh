#!/usr/bin/env bash
# The acceptance run: GPU tests, the default run three times (first from an empty kernel
# cache), int32, the headline sizes, half types, the sweep and its plot, ncu against the
# harness, and compute-sanitizer. $OUT gets bundle.tgz, the sweep's PNG and summary.txt.
source scripts/device_env.sh
W=/tmp/rb; mkdir -p $W/results; R=$W/results
stage() { echo "== $1 ($(date +%T))"; }
run() { python3 -m reducebench run "$@"; }
PART=${1:-all}
if [ "$PART" != b ]; then
stage "gpu tests"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ 2>&1 | tee $W/pytest_gpu.log | tail -4
stage "default run x3, the first from an empty kernel cache"
rm -rf ~/.cupy/kernel_cache
three_default_runs
run --size 2^24 --dtype int32 --out $R/h100_default_i32.csv > $W/default_i32.txt 2>&1
stage "headline"
run --size 2^20,2^24,2^28,2^30 --dtype float32,int32 \
    --rung gridstride_atomic,vector_load,single_pass,cub,torch \
    --out $R/h100_headline.csv > $W/headline.txt 2>&1
run --size 2^24 --dtype float16,bfloat16 --rung shfl_unroll,vector_load,single_pass,torch \
    --out $R/h100_half.csv > $W/half.txt 2>&1
fi
if [ "$PART" != a ]; then
stage "cupy past 2^31 with its own chain"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_huge.py -k cupy 2>&1 | tail -1
stage "small-n tuning"
run --size 2^20 --rung vector_load,single_pass,cub --block 128,256,512,1024 \
    --param loads=1,2,4 --max-time 0.3 --out $R/h100_tune_2p20.csv > $W/tune_2p20.txt 2>&1
python3 - $R/h100_tune_2p20.csv <<'PY'
import sys, pandas as pd
d = pd.read_csv(sys.argv[1]); d = d[d.status == "ok"].sort_values("median_us")
print(d[["rung", "block", "params", "grid", "median_us"]].head(6).to_string(index=False))
PY
stage "sweep"
run --config configs/sweep.toml --out $R/h100_sweep.csv > $W/sweep.txt 2>&1
python3 -m reducebench plot $R/h100_sweep.csv -o $OUT/h100_sweep.png
stage "ncu"
for n in 16777216 268435456; do
    ncu --nvtx --nvtx-include "reducebench@single_pass float32 n=$n block=256 blocks_per_sm=8 l2_prefetch=0 loads=4/" \
        --clock-control none --metrics gpu__time_duration.sum \
        python3 -m reducebench run --size $n --rung single_pass --profile \
        --out $R/ncu_profile_$n.csv > $W/ncu_$n.txt 2>&1
    grep gpu__time_duration $W/ncu_$n.txt
done
stage "sanitize"
python3 -m reducebench sanitize --size 1000003 --out $R/h100_sanitize.md > $W/sanitize.txt 2>&1
tail -22 $W/sanitize.txt
fi
tar -czf $OUT/bundle.tgz -C $W .
python3 - $R > $OUT/summary.txt <<'PY'
import sys, glob, pandas as pd
for f in sorted(glob.glob(sys.argv[1] + "/h100_*.csv")):
    d = pd.read_csv(f)
    bad = d[d.status.isin(["FAIL", "error"])]
    print(f.split("/")[-1], len(d), "rows,", len(bad), "failed")
try:
    d = pd.read_csv(sys.argv[1] + "/h100_headline.csv")
    print(d[["rung", "dtype", "n", "median_us", "gbps", "pct_peak", "status"]].to_string(index=False))
except FileNotFoundError:
    pass
PY
cat $OUT/summary.txt
