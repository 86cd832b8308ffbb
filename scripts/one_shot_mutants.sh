#!/usr/bin/env bash
# Proof that the GPU tests of one_shot can fail: each planted bug below is applied in turn
# to cuda_src/19_one_shot.cu (or to the head and tail code it shares, cuda_src/common.cuh),
# the exact-sum test of one_shot runs, and it must fail; the files are restored after
# each. Then the timing tests run once on the real code, and the unaligned-input test on
# the real code and against a head that is never read.
#   bash scripts/one_shot_mutants.sh      (on a GPU machine; $OUT/logs gets the log)
source scripts/lib.sh
SRC=cuda_src/19_one_shot.cu
LOG=$L/one_shot_mutants_${SLUG}_$COMMIT.txt
COMMON=cuda_src/common.cuh
cp $SRC /tmp/one_shot.cu.orig; cp $COMMON /tmp/common.cuh.orig
mutate() {  # name, file, sed expression (one_shot's own file or the shared head/tail code)
    cp /tmp/one_shot.cu.orig $SRC; cp /tmp/common.cuh.orig $COMMON
    sed -i "$3" $2
    if cmp -s $SRC /tmp/one_shot.cu.orig && cmp -s $COMMON /tmp/common.cuh.orig; then
        echo "$1: the edit did not apply" | tee -a $LOG; return
    fi
    python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_correctness.py \
        -k "one_shot and exact" > /tmp/mutant.log 2>&1
    rc=$?
    echo "$1: pytest rc=$rc ($(tail -1 /tmp/mutant.log))" | tee -a $LOG
}
mutate "pairwise sum skips the last load" $SRC 's/k + step < LOADS; k += 2 \* step/k + step < LOADS - 1; k += 2 * step/'
mutate "tail short by one element" $COMMON 's/if (tid < n - split.tail_start) sum/if (tid + 1 < n - split.tail_start) sum/'
mutate "next launch's accumulator not zeroed" $SRC 's/if (blockIdx.x == 0 \&\& tid == 0) \*next = Acc(0);//'
mutate "head ignored" $COMMON 's/if (tid < split.head) sum += /if (false) sum += /'
mutate "the partial tile taken for a whole one" $SRC 's/if (aligned \&\& blockIdx.x < whole_tiles)/if (aligned \&\& blockIdx.x <= whole_tiles)/'
mutate "the tail left to block 0 of an aligned input" $SRC 's/if (blockIdx.x == (aligned ? whole_tiles : 0u))/if (blockIdx.x == 0u)/'
mutate "short sums skip their widest shuffle step" $COMMON 's/offset = pow2_at_least(COUNT) \/ 2;/offset = pow2_at_least(COUNT) \/ 4;/'
mutate "short form's second level skipped" $COMMON 's/^                v = first_lanes_sum<kWarps>(v);/                v = v;/'
mutate "int warp sums take the largest lane" $COMMON 's/return __reduce_add_sync(kFullMask, v);/return __reduce_max_sync(kFullMask, v);/'
cp /tmp/one_shot.cu.orig $SRC; cp /tmp/common.cuh.orig $COMMON
python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_timing.py > $L/pytest_gpu_timing_${SLUG}_$COMMIT.log 2>&1
echo "timing tests: $(tail -1 $L/pytest_gpu_timing_${SLUG}_$COMMIT.log)" | tee -a $LOG
# The head, caught only by inputs that start off a 16-byte boundary:
cp /tmp/one_shot.cu.orig $SRC
python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_unaligned.py > $L/pytest_gpu_unaligned_${SLUG}_$COMMIT.log 2>&1
echo "unaligned inputs, the real code: $(tail -1 $L/pytest_gpu_unaligned_${SLUG}_$COMMIT.log)" | tee -a $LOG
sed -i 's/if (tid < split.head) sum += /if (false) sum += /' $COMMON
python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_unaligned.py -k one_shot > /tmp/mutant.log 2>&1
echo "head ignored, against the unaligned test: pytest rc=$? ($(tail -1 /tmp/mutant.log))" | tee -a $LOG
cp /tmp/common.cuh.orig $COMMON
