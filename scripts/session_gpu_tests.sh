#!/usr/bin/env bash
# The GPU tests a session runs before it resolves anything that touches cuda_src/ or the
# device layer, in two parts that each fit one device call (10 minutes):
#   bash scripts/session_gpu_tests.sh suite    every test marked gpu but the signal stages
#   bash scripts/session_gpu_tests.sh stages   the signal at every stage, then the same
#                                              seed through an older checkout and this one
# Files: $OUT/logs/pytest_gpu_<part>_<gpu>_<commit>.log, $OUT/<gpu>/ (scripts/lib.sh).
# `stages` needs the older checkout's package in .old-tree/ (its commit in .old-tree/COMMIT):
#   git archive OLD reducebench cuda_src configs | tar -x -C .old-tree
source scripts/lib.sh
part=${1:?suite or stages}
log=$L/pytest_gpu_${part}_${SLUG}_$COMMIT.log
if [ "$part" = suite ]; then
    python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/ \
        --deselect tests/test_gpu_interrupt_stages.py 2>&1 | tee $log | tail -8
    exit 0
fi
python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/test_gpu_interrupt_stages.py \
    tests/test_gpu_interrupt.py 2>&1 | tee $log | tail -8
old=$(cat .old-tree/COMMIT)
seed=20261123
(cd .old-tree && PYTHONPATH=$PWD:/tmp/site REDUCEBENCH_COMMIT=$old \
    python3 -m reducebench run --size 2^24 --seed $seed \
    --out $R/default_f32_seed${seed}_$old.csv > $L/default_run_seed${seed}_$old.txt 2>&1)
$RB run --size 2^24 --rung all,cupy --seed $seed --out $R/default_f32_seed${seed}_$COMMIT.csv \
    > $L/default_run_seed${seed}_$COMMIT.txt 2>&1
tail -4 $L/default_run_seed${seed}_$COMMIT.txt
$RB compare $R/default_f32_seed${seed}_$old.csv $R/default_f32_seed${seed}_$COMMIT.csv \
    > $L/compare_seed${seed}_${old}_vs_$COMMIT.txt 2>&1
python3 - $R/default_f32_seed${seed}_$old.csv $R/default_f32_seed${seed}_$COMMIT.csv <<'PY' | tee -a $L/compare_seed${seed}_${old}_vs_$COMMIT.txt
import sys
from reducebench.results.files import read_results, row_keys
a, b = ({k: r for k, r in zip(row_keys(f), f.to_dict("records"))}
        for f in map(read_results, sys.argv[1:]))
same = [k for k in a if k in b]
exact = sum(str(a[k]["result"]) == str(b[k]["result"]) for k in same)
print(f"same seed: {len(same)} cases in both; identical sums in {exact}")
print("ratio of medians new/old: " + ", ".join(
    f"{k[0]} {b[k]['median_us'] / a[k]['median_us']:.3f}" for k in same))
PY
tail -3 $L/compare_seed${seed}_${old}_vs_$COMMIT.txt
