#!/usr/bin/env bash
# The foundation and ladder acceptance run on the GPU: correctness of every rung x dtype x
# block, the default runs, the published ladders, an ncu cross-check through an NVTX range,
# and compute-sanitizer. Everything lands in $OUT/bundle.tgz; a short summary prints last.
source scripts/device_env.sh
W=/tmp/rb; rm -rf $W; mkdir -p $W/results
stage() { echo "== $1 ($(date +%T))"; }
stage "gpu tests"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ 2>&1 \
    | tee $W/pytest_gpu.log | tail -15
stage "run float32 (cold cache: first compile)"
/usr/bin/time -f "wall %e s" python3 -m reducebench run --size 2^24 \
    --out $W/results/h100_run_f32_2p24.csv 2>&1 | tee $W/run_f32.txt
stage "run int32"
python3 -m reducebench run --size 2^24 --dtype int32 \
    --out $W/results/h100_run_i32_2p24.csv 2>&1 | tee $W/run_i32.txt
stage "harris"
python3 -m reducebench run --config configs/harris.toml \
    --out $W/results/h100_harris.csv 2>&1 | tee $W/harris.txt
stage "seed004"
python3 -m reducebench run --config configs/seed004.toml \
    --out $W/results/h100_seed004.csv 2>&1 | tee $W/seed004.txt
stage "ncu through the NVTX range of one case"
ncu --nvtx --nvtx-include "reducebench@single_pass float32 n=16777216 block=256 blocks_per_sm=4 loads=4/" \
    --clock-control none --metrics gpu__time_duration.sum \
    python3 -m reducebench run --size 2^24 --rung single_pass,shfl --profile \
    --out $W/results/ncu_profile_run.csv > $W/ncu.txt 2>&1; tail -25 $W/ncu.txt
stage "shfl lab"
for args in "down --delta 16 --threads 35" "sync --src-lane 17 --width 16" \
            "xor --lane-mask 3" "up --delta 2 --width 16"; do
    echo "\$ reducebench shfl $args"; python3 -m reducebench shfl $args
done > $W/shfl.txt 2>&1; tail -5 $W/shfl.txt
stage "sanitize"
python3 -m reducebench sanitize --size 1000003 --out $W/results/h100_sanitize.md 2>&1 \
    | tee $W/sanitize.txt | tail -25
tar -czf $OUT/bundle.tgz -C $W .
stage "done"
