#!/usr/bin/env bash
# The half types and the small sizes on one GPU, CSVs to $OUT/<gpu>/ (scripts/lib.sh):
#   half   float16 and bfloat16 at 2^24 and 2^30: auto, the best fixed rungs, CUB and
#          torch.sum (target: auto <= 0.9 x torch at 2^24, >= 97% of the ceiling at 2^30)
#   small  2^10..2^16 float32 and int32: auto, one_block, pingpong and CUB, the same run
#          twice (to see which differences repeat)
#   bash scripts/half_and_small_sizes.sh [half] [small]     about 4 minutes
source scripts/lib.sh
STAGES=${*:-"half small"}
has() { [[ " $STAGES " == *" $1 "* ]]; }
if has half; then
    echo "== half types on $GPU"
    $RB run --size 2^24,2^30 --dtype float16,bfloat16 --rung auto,pingpong,vector_load,cub,torch \
        --seed 17 --out $R/half_$COMMIT.csv 2>&1 | tail -30
fi
if has small; then
    for i in 1 2; do
        echo "== small sizes, run $i, on $GPU"
        $RB run --size 2^10..2^16 --dtype float32,int32 --rung auto,one_block,pingpong,cub \
            --seed 17 --out $R/small_run${i}_$COMMIT.csv > $L/small_run${i}_${SLUG}_$COMMIT.txt 2>&1
        tail -3 $L/small_run${i}_${SLUG}_$COMMIT.txt
    done
fi
