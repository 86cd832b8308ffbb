#!/usr/bin/env bash
# The same-size read with every tile and load hint that `auto` runs (twelfth session), on
# one GPU in two device calls. `first`: the GPU tests of the read and the ceiling, every
# read kernel at every size (scripts/read_kernels_probe.py, two rounds, its lead over the
# kernels the read had before), the float32 sweep 2^10..2^30 and every dtype at 2^31 and
# 2^32; `second`: the int32, float16 and bfloat16 sweep 2^10..2^30. Each part stops by
# its own deadline; the other scripts bundle their files into $OUT as they go.
#
#   bash scripts/read_hints_check.sh first
#   bash scripts/read_hints_check.sh second
set -o pipefail
PART=${1:?first or second}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
COMMIT=${REDUCEBENCH_COMMIT:-unknown}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$GPU" in *H200*) TAG=h200 ;; *H100*) TAG=h100 ;; *) TAG=gpu ;; esac
# The read kernels before this session: the probe's lead is over the best of these.
OLD="one-shot 1024x4;one-shot 512x8;one-shot 256x16;one-shot 1024x2;one-shot 512x2;one-shot 512x4;one-shot 256x2;one-shot 256x4;one-shot 1024x4 evict-first;grid-stride 512x4, 3/SM;grid-stride 256x8, 4/SM;grid-stride 256x16, 2/SM"
case $PART in
first)
    P=$OUT/read_kernels_${TAG}_${COMMIT}
    echo "== read kernels probe ($(date +%T))"
    timeout -s INT 150 python3 scripts/read_kernels_probe.py $P.csv --sizes 2^10..2^32 \
        --old "$OLD" > $P.txt 2>&1; echo "probe rc=$?"
    F32_SIZES=2^10..2^30 DEADLINE=$((540 - SECONDS - 90)) \
        bash scripts/read_reference_sweep.sh tests sweep
    DEADLINE=$((575 - SECONDS)) bash scripts/finish_and_counters.sh big > /dev/null
    tail -30 $P.txt ;;
second)
    OTHER_SIZES=2^10..2^30 DEADLINE=560 bash scripts/read_reference_sweep.sh others ;;
*) echo "read_hints_check.sh: first or second, not $PART" >&2; exit 2 ;;
esac
