#!/usr/bin/env bash
# Every GPU test, then a short run: what a change to cuda_src/ or the device layer needs.
source scripts/device_env.sh
python3 -m pytest -m gpu -q -p no:cacheprovider tests/ 2>&1 | tee $OUT/pytest_gpu.log | tail -4
python3 -m reducebench run --size 2^24 --rung vector_load,single_pass,cub --out $OUT/check_run.csv
