#!/usr/bin/env bash
# Bring-your-own-kernel acceptance (issue #8) and the CUDA-error test (issue #6): every GPU
# test, the example kernel next to the best rungs and cub, the wrong, crashing and
# non-compiling kernels, ncu on the example's NVTX range; then issue #5's stability probe.
source scripts/device_env.sh
W=/tmp/rb; mkdir -p $W/results; R=$W/results
K=tests/fixtures/kernels
EX="--kernel examples/grid_stride_sum.cu:grid_stride_sum --finish atomic --grid per-sm=8"
stage() { echo "== $1 ($(date +%T))"; }
stage "gpu tests"
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ 2>&1 | tee $W/pytest_gpu.log | tail -3
stage "example kernel"
python3 -m reducebench run --size 2^20,2^24,2^28 --rung vector_load,single_pass,cub $EX \
    --seed 8 --out $R/h100_custom_example.csv > $W/custom_example.txt 2>&1; echo "rc=$?"
python3 -m reducebench run --size 2^24 --dtype float16,bfloat16,int32 \
    --rung vector_load,torch $EX --seed 8 --out $R/h100_custom_example_types.csv \
    > $W/custom_example_types.txt 2>&1; echo "rc=$?"
stage "wrong, crashing and broken kernels"
for k in "drops_last_element.cu:drops_last_element --grid per-sm=4" \
         "illegal_address.cu:illegal_address" "does_not_compile.cu:does_not_compile"; do
    name=${k%%.cu*}
    python3 -m reducebench run --size 2^20 --rung shfl --kernel $K/$k \
        --out $R/h100_custom_$name.csv > $W/custom_$name.txt 2>&1
    echo "$name rc=$?"; tail -4 $W/custom_$name.txt
done
stage "ncu on the example's range"
ncu --nvtx --nvtx-include "reducebench@grid_stride_sum float32 n=16777216 block=256/" \
    --clock-control none --metrics gpu__time_duration.sum \
    python3 -m reducebench run --size 2^24 --rung none $EX --profile \
    --out $R/ncu_custom_profile.csv > $W/ncu_custom.txt 2>&1
grep gpu__time_duration $W/ncu_custom.txt
stage "stability probe"
python3 scripts/stability_probe.py 8 2>&1 | tee $W/stability_probe.txt
stage "summary"
python3 scripts/bench_tables.py $R/h100_custom_example.csv 2>&1 | tail -30
tar czf $OUT/bundle.tgz -C $W .
