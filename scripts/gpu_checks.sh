#!/usr/bin/env bash
# Every GPU test, then a short run: what a change to cuda_src/ or the device layer needs.
#   REDUCEBENCH_COMMIT=$(git rev-parse --short HEAD) bash scripts/gpu_checks.sh [PYTEST_ARGS]
# With no arguments it runs every test marked gpu; logs and the run's CSV go to $OUT.
source scripts/device_env.sh
python3 -m pytest -m gpu -q -p no:cacheprovider -rs "${@:-tests/}" 2>&1 | tee $OUT/pytest_gpu.log | tail -15
python3 -m reducebench run --size 2^24 --rung vector_load,single_pass,pingpong,cub \
    --out $OUT/check_run.csv 2>&1 | tail -12
