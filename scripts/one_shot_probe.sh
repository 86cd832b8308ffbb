#!/usr/bin/env bash
# The one_shot rung on one GPU, in one device call: its GPU tests (exact sums at awkward
# sizes for every dtype and block, every parameter value), then a geometry probe of
# pingpong and one_shot beside auto and CUB, with the same-size read on every row
# (float32 2^12..2^30, float16 and bfloat16 2^20..2^28). Files go to $W and are bundled
# into $OUT after every stage; the best variant per size is printed last.
#
#   bash scripts/one_shot_probe.sh                 tests, probe_f32, probe_half
#   bash scripts/one_shot_probe.sh probe_f32       some stages
#   bash scripts/one_shot_probe.sh probe_small     small blocks (one or two warps, no or
#       one barrier in the block sum) at 2^10..2^20, float32 and float16, two rounds
set -o pipefail
STAGES=${*:-"tests probe_f32 probe_half"}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/oneshot; mkdir -p $W
RB="python3 -m reducebench"
COMMIT=${REDUCEBENCH_COMMIT:-unknown}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$GPU" in *H200*) TAG=h200 ;; *H100*) TAG=h100 ;; *) TAG=gpu ;; esac
LOG=$W/probe_log_${TAG}_${COMMIT}.txt
stage() { echo "== $1 ($(date +%T), ${SECONDS}s in)" | tee -a $LOG; }
has() { [[ " $STAGES " == *" $1 "* ]]; }
bundle() { tar czf $OUT/.partial.tgz -C $W . && mv $OUT/.partial.tgz $OUT/probe_${TAG}_${COMMIT}.tar.gz; }
DEADLINE=${DEADLINE:-570}
left() { echo $(( DEADLINE - SECONDS > 5 ? DEADLINE - SECONDS : 5 )); }

if has tests; then
    stage "GPU tests of one_shot"
    timeout -s INT $(left) python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_correctness.py \
        tests/test_gpu_params.py -k one_shot > $W/pytest_gpu_one_shot_${TAG}_${COMMIT}.log 2>&1
    tail -3 $W/pytest_gpu_one_shot_${TAG}_${COMMIT}.log | tee -a $LOG
    bundle
fi
if has probe_f32; then
    stage "probe float32"
    timeout -s INT $(left) $RB run --rung pingpong,one_shot,auto,cub --block 256,512,1024 \
        --param loads=2,4,8,16 --size 2^12,2^16,2^20,2^22,2^24,2^26,2^28,2^30 --dtype float32 \
        --inputs random --max-time 0.1 --out $W/probe_f32_${COMMIT}.csv > $W/probe_f32.txt 2>&1
    echo "rc=$?" | tee -a $LOG
    bundle
fi
if has probe_half; then
    stage "probe float16, bfloat16"
    timeout -s INT $(left) $RB run --rung pingpong,one_shot,auto --block 256,512,1024 \
        --param loads=2,4,8,16 --size 2^20,2^22,2^24,2^26,2^28 --dtype float16,bfloat16 \
        --inputs random --max-time 0.1 --out $W/probe_half_${COMMIT}.csv > $W/probe_half.txt 2>&1
    echo "rc=$?" | tee -a $LOG
    bundle
fi
if has probe_small; then
    for round in 1 2; do
        stage "probe small blocks, round $round"
        timeout -s INT $(left) $RB run --rung one_shot,auto,cub --block 32,64,128,256 \
            --param loads=1,2,4,8 --size 2^10..2^20 --dtype float32,float16 \
            --inputs random --max-time 0.1 --out $W/probe_small_r${round}_${COMMIT}.csv \
            > $W/probe_small_r${round}.txt 2>&1
        echo "rc=$?" | tee -a $LOG
        bundle
    done
fi
python3 scripts/variant_pct_read.py $W/probe_*.csv 2>&1 | tee $W/probe_summary_${TAG}_${COMMIT}.txt
bundle
