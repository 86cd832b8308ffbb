#!/usr/bin/env bash
# After a change to one_shot (cuda_src/19_one_shot.cu or the common.cuh code it uses), on
# one GPU in one device call: the planted bugs (scripts/one_shot_mutants.sh, with the
# timing and unaligned-input tests), the exact-sum and parameter tests of the rungs that
# share common.cuh's vector code, then `tune` and the float32 sweep of auto, CUB and
# torch.sum (scripts/read_reference_sweep.sh, sizes from F32_SIZES). Logs go to
# $OUT/logs, the sweep's files to $OUT/<gpu>_<commit>.tar.gz.
#   F32_SIZES=2^10..2^30 bash scripts/one_shot_checks.sh
source scripts/lib.sh
bash scripts/one_shot_mutants.sh
python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_correctness.py tests/test_gpu_params.py \
    -k "one_shot or vector_load or single_pass or pingpong or one_block" \
    > $L/pytest_gpu_top_rungs_${SLUG}_$COMMIT.log 2>&1
echo "exact sums and parameters of the vector rungs: $(tail -1 $L/pytest_gpu_top_rungs_${SLUG}_$COMMIT.log)" \
    | tee -a $L/one_shot_mutants_${SLUG}_$COMMIT.txt
DEADLINE=$(( ${DEADLINE:-575} - SECONDS )) bash scripts/read_reference_sweep.sh tune sweep
