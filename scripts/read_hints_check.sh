#!/usr/bin/env bash
# The same-size read with every tile and load hint that `auto` runs (twelfth session), on
# one GPU. `first`: the GPU tests of the read and the ceiling, every read kernel at every
# size (scripts/read_kernels_probe.py at the bytes of 2^10..2^32 float32 elements, two
# rounds, its lead over the kernels the read had before), the float32 sweep 2^10..2^30
# and every dtype at 2^31 and 2^32; `second`: the int32, float16 and bfloat16 sweep
# 2^10..2^30; `fold`: the probe at 2^26..2^32 with the block-fold read beside the rest,
# then every dtype at 2^31 and 2^32 again. Each part stops by its own deadline
# (DEADLINE, seconds); the other scripts bundle their files into $OUT as they go.
#
#   bash scripts/read_hints_check.sh first
#   bash scripts/read_hints_check.sh second
#   DEADLINE=200 bash scripts/read_hints_check.sh fold
set -o pipefail
PART=${1:?first, second or fold}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export REDUCEBENCH_COMMIT=${REDUCEBENCH_COMMIT:-$(cat COMMIT 2>/dev/null || git rev-parse --short HEAD 2>/dev/null || echo unknown)}
COMMIT=$REDUCEBENCH_COMMIT
DEADLINE=${DEADLINE:-575}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$GPU" in *H200*) TAG=h200 ;; *H100*) TAG=h100 ;; *) TAG=gpu ;; esac
# The read kernels before this session: the probe's lead is over the best of these.
OLD="one-shot 1024x4;one-shot 512x8;one-shot 256x16;one-shot 1024x2;one-shot 512x2;one-shot 512x4;one-shot 256x2;one-shot 256x4;one-shot 1024x4 evict-first;grid-stride 512x4, 3/SM;grid-stride 256x8, 4/SM;grid-stride 256x16, 2/SM"
# ... and with the tiles and hints `auto` runs: the fold's lead is over the best of these.
WITH_HINTS="$OLD;one-shot 1024x8;one-shot 256x8;one-shot 128x4;one-shot 32x2;one-shot 32x4;one-shot 32x8;one-shot 512x2 L2 prefetch;one-shot 1024x4 L2 prefetch"
probe() {  # OUT-NAME SIZES OLD-SET
    local p="$OUT/$1_${TAG}_${COMMIT}"
    echo "== read kernels probe $2 ($(date +%T))"
    timeout -s INT $(( DEADLINE / 2 < 150 ? DEADLINE / 2 : 150 )) \
        python3 scripts/read_kernels_probe.py "$p.csv" --sizes "$2" \
        --old "$3" > "$p.txt" 2>&1; echo "probe rc=$?"
}
case $PART in
first)
    probe read_kernels 2^10..2^32 "$OLD"
    F32_SIZES=2^10..2^30 DEADLINE=$((DEADLINE - 35 - SECONDS - 90)) \
        bash scripts/read_reference_sweep.sh tests sweep
    DEADLINE=$((DEADLINE - SECONDS)) bash scripts/finish_and_counters.sh big > /dev/null
    tail -30 "$OUT/read_kernels_${TAG}_${COMMIT}.txt" ;;
second)
    OTHER_SIZES=2^10..2^30 DEADLINE=$((DEADLINE - 15)) bash scripts/read_reference_sweep.sh others ;;
fold)
    probe read_fold 2^26..2^32 "$WITH_HINTS"
    DEADLINE=$((DEADLINE - SECONDS)) bash scripts/finish_and_counters.sh big > /dev/null
    tail -12 "$OUT/read_fold_${TAG}_${COMMIT}.txt"
    python3 scripts/pct_read_summary.py /tmp/rbfinish/pct_read_big_${COMMIT}.csv | cut -c1-90 ;;
*) echo "read_hints_check.sh: first, second or fold, not $PART" >&2; exit 2 ;;
esac
