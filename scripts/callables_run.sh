#!/usr/bin/env bash
# Issue 19's run: the ladder's top rungs, CUB, torch, the Triton rungs and the two example
# callables at 2^24 and 2^28 float32, into $OUT/<gpu>_callables_<commit>.csv.
source scripts/device_env.sh
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
SLUG=$(python3 -c "from reducebench.tuning import gpu_slug; print(gpu_slug('$GPU'))")
python3 -m reducebench run --size 2^24,2^28 \
    --rung vector_load,pingpong,auto,triton_atomic,triton_two_pass,cub,torch \
    --callable examples/cupy_sum.py:cupy_sum --callable examples/torch_sum.py:torch_sum \
    --seed 19 --out $OUT/${SLUG}_callables_${REDUCEBENCH_COMMIT:-local}.csv 2>&1 \
    | tee $OUT/callables_run.txt | tail -28
