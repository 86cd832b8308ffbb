#!/usr/bin/env bash
# Issue 17's remaining targets on one GPU, CSVs to $OUT named after the GPU:
#   half   float16 and bfloat16 at 2^24 and 2^30: auto, the best fixed rungs, CUB and
#          torch.sum (target: auto <= 0.9 x torch at 2^24, >= 97% of the ceiling at 2^30)
#   small  2^10..2^16 float32 and int32: auto, one_block, pingpong and CUB, the same run
#          twice (to see which differences repeat)
#   bash scripts/targets17.sh [half] [small]
source scripts/device_env.sh
STAGES=${*:-"half small"}
RB="python3 -m reducebench"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
SLUG=$(python3 -c "from reducebench.tuning import gpu_slug; print(gpu_slug('$GPU'))")
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo nogit)
has() { [[ " $STAGES " == *" $1 "* ]]; }
if has half; then
    echo "== half types on $GPU"
    $RB run --size 2^24,2^30 --dtype float16,bfloat16 --rung auto,pingpong,vector_load,cub,torch \
        --seed 17 --out $OUT/${SLUG}_half_${COMMIT}.csv 2>&1 | tail -30
fi
if has small; then
    for i in 1 2; do
        echo "== small sizes, run $i, on $GPU"
        $RB run --size 2^10..2^16 --dtype float32,int32 --rung auto,one_block,pingpong,cub \
            --seed 17 --out $OUT/${SLUG}_small_run${i}_${COMMIT}.csv > $OUT/small_run$i.txt 2>&1
        tail -3 $OUT/small_run$i.txt
    done
fi
