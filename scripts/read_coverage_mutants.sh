#!/usr/bin/env bash
# The read kernels' GPU tests on the real code (tests/test_gpu_tuning.py and
# tests/test_gpu_read_reference.py: the ceiling, the same-size read, and a marked word in a
# buffer of zeros that every read kernel must find), then proof that the coverage test
# can fail: each planted bug below is applied in turn to cuda_src/ceiling.cu or to the
# grids of reducebench/measuring/ceiling.py, the coverage test runs, and it must fail;
# the files are restored after each. Then one `reducebench run` at 2^24 on the real code.
#   bash scripts/read_coverage_mutants.sh      (on a GPU machine; $OUT/logs gets the logs)
source scripts/lib.sh
LOG=$L/read_coverage_mutants_${SLUG}_$COMMIT.txt
CU=cuda_src/ceiling.cu
PY=reducebench/measuring/ceiling.py
cp $CU /tmp/ceiling.cu.orig; cp $PY /tmp/ceiling.py.orig
trap 'cp /tmp/ceiling.cu.orig $CU; cp /tmp/ceiling.py.orig $PY' EXIT  # whatever stops it
python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_tuning.py \
    tests/test_gpu_read_reference.py > $L/pytest_gpu_read_${SLUG}_$COMMIT.log 2>&1
echo "the real code: pytest rc=$? ($(tail -1 $L/pytest_gpu_read_${SLUG}_$COMMIT.log))" | tee -a $LOG
mutate() {  # name, file, sed expression
    cp /tmp/ceiling.cu.orig $CU; cp /tmp/ceiling.py.orig $PY
    sed -i "$3" $2
    if cmp -s $CU /tmp/ceiling.cu.orig && cmp -s $PY /tmp/ceiling.py.orig; then
        echo "$1: the edit did not apply" | tee -a $LOG; return
    fi
    python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_tuning.py \
        -k reads_every_word > /tmp/mutant.log 2>&1
    rc=$?
    echo "$1: pytest rc=$rc ($(tail -1 /tmp/mutant.log))" | tee -a $LOG
    grep -m3 "one-shot\|grid-stride" /tmp/mutant.log | cut -c1-120 | tee -a $LOG
}
mutate "one-shot folds all loads but the last" $CU 's/for (unsigned k = 0; k < LOADS; ++k) folded ^= fold(r\[k\]);/for (unsigned k = 0; k + 1 < LOADS; ++k) folded ^= fold(r[k]);/'
mutate "one-shot threads past the second warp fold nothing" $CU 's/for (unsigned k = 0; k < LOADS; ++k) folded ^= fold(r\[k\]);/for (unsigned k = 0; k < LOADS; ++k) if (threadIdx.x < 64) folded ^= fold(r[k]);/'
mutate "the block fold keeps thread 1's total" $CU 's/if (threadIdx.x == 0) keep_alive(__float_as_int(total), sink);/if (threadIdx.x == 1) keep_alive(__float_as_int(total), sink);/'
mutate "the partial last tile is never read" $CU 's/first + k \* BLOCK < words ? read_word<HINT>/false ? read_word<HINT>/'
mutate "grid-stride drops its last partial set" $CU 's/if (w + k \* BLOCK < words) folded ^= fold/if (false) folded ^= fold/'
mutate "grid-stride folds only its first load's words" $CU 's/        folded ^= fold(acc\[k\]);/        if (k == 0) folded ^= fold(acc[k]);/'
mutate "one-shot grid rounds down" $PY 's|tiles = -(-words // (self.block \* self.loads))|tiles = words // (self.block * self.loads)|'
cp /tmp/ceiling.cu.orig $CU; cp /tmp/ceiling.py.orig $PY
$RB run --size 2^24 --inputs random --out $R/run_2p24_$COMMIT.csv > $L/run_2p24_${SLUG}_$COMMIT.txt 2>&1
echo "reducebench run --size 2^24: rc=$?" | tee -a $LOG
tail -32 $L/run_2p24_${SLUG}_$COMMIT.txt | cut -c1-150
