#!/usr/bin/env bash
# Python callables beside the ladder: the top rungs, CUB, torch, the Triton rungs and the
# two example callables (examples/cupy_sum.py, examples/torch_sum.py) at 2^24 and 2^28
# float32, into $OUT/<gpu>/callables_<commit>.csv (scripts/lib.sh). About 2 minutes.
source scripts/lib.sh
$RB run --size 2^24,2^28 \
    --rung vector_load,pingpong,auto,triton_atomic,triton_two_pass,cub,torch \
    --callable examples/cupy_sum.py:cupy_sum --callable examples/torch_sum.py:torch_sum \
    --seed 19 --out $R/callables_$COMMIT.csv 2>&1 \
    | tee $L/callables_run_${SLUG}_$COMMIT.txt | tail -28
