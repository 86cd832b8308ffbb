#!/usr/bin/env bash
# Every GPU test, then a short run: what a change to cuda_src/ or the device layer needs.
#   bash scripts/gpu_checks.sh [PYTEST_ARGS]
# With no arguments it runs every test marked gpu; the log goes to
# $OUT/logs/pytest_gpu_<gpu>_<commit>.log and the run's CSV to $OUT/<gpu>/ (scripts/lib.sh).
source scripts/lib.sh
python3 -m pytest -m gpu -q -p no:cacheprovider -rs "${@:-tests/}" 2>&1 \
    | tee $L/pytest_gpu_${SLUG}_$COMMIT.log | tail -15
$RB run --size 2^24 --rung vector_load,single_pass,pingpong,cub \
    --out $R/check_run_$COMMIT.csv 2>&1 | tail -12
