#!/usr/bin/env bash
# Issue 27 on one GPU, in one device call: info (with the same-size read), the GPU tests
# of the read reference, `reducebench tune` (optimising pct_read; the tuning file it
# writes is the one the sweep's auto uses), the sweep of auto, CUB and torch.sum with the
# same-size read on every row (float32 2^10..2^32; int32, float16, bfloat16 2^10..2^28 and
# 2^30: their 2^31 and 2^32 inputs alone would take minutes to make on the host), and
# `run --metrics` of auto at one size per band. Everything goes to $W and is bundled
# into $OUT/<gpu>_<commit>.tar.gz after every stage (a timeout keeps what was done);
# the summary table (scripts/pct_read_summary.py) is printed last.
#
#   bash scripts/read_reference_sweep.sh                 every stage (about 8 min)
#   bash scripts/read_reference_sweep.sh tune sweep      some stages
#   F32_SIZES=2^10..2^30 bash scripts/read_reference_sweep.sh sweep   other sizes
set -o pipefail
STAGES=${*:-"info tests tune sweep metrics probe others"}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/rb27; mkdir -p $W  # kept between invocations in one call: one bundle holds every stage
RB="python3 -m reducebench"
COMMIT=${REDUCEBENCH_COMMIT:-$(cat COMMIT 2>/dev/null || echo unknown)}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$GPU" in *H200*) TAG=h200 ;; *H100*) TAG=h100 ;; *) TAG=gpu ;; esac
SLUG=$(python3 -c "from reducebench.ladder.auto import gpu_slug; print(gpu_slug('$GPU'))")
TUNING=$(python3 -c "from reducebench.ladder.auto import user_path; print(user_path('$GPU'))")
RUNGS=auto,cub,torch
F32_SIZES=${F32_SIZES:-2^10..2^32}          # the sweep stage's sizes
OTHER_SIZES=${OTHER_SIZES:-2^10..2^28,2^30}  # the others stage's
LOG=$W/log_${TAG}_${COMMIT}.txt
stage() { echo "== $1 ($(date +%T), ${SECONDS}s in)" | tee -a $LOG; }
has() { [[ " $STAGES " == *" $1 "* ]]; }
bundle() { tar czf $OUT/.partial.tgz -C $W . && mv $OUT/.partial.tgz $OUT/${TAG}_${COMMIT}.tar.gz; }
# Each stage stops by DEADLINE seconds into the script (the device call's limit is 600 s),
# leaving time for the summary.
DEADLINE=${DEADLINE:-570}
left() { echo $(( DEADLINE - SECONDS > 5 ? DEADLINE - SECONDS : 5 )); }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv \
    >> $LOG 2>&1
if has info; then
    stage "info"
    $RB info >> $LOG 2>&1; echo "info rc=$?" >> $LOG
    bundle
fi
if has tests; then
    stage "GPU tests: read reference, ceiling, auto, one_shot"
    python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_read_reference.py \
        tests/test_gpu_tuning.py tests/test_gpu_correctness.py tests/test_gpu_params.py \
        -k "read or ceiling or auto or one_shot" > $W/pytest_gpu_${TAG}_${COMMIT}.log 2>&1
    tail -3 $W/pytest_gpu_${TAG}_${COMMIT}.log | tee -a $LOG
    bundle
fi
if has tune; then
    stage "tune (pct_read)"
    mkdir -p "$(dirname "$TUNING")"  # tune writes only into an existing folder
    timeout -s INT $(left) $RB tune --out $TUNING --records $W/tune_candidates_${COMMIT}.csv >> $LOG 2>&1
    echo "tune rc=$?" | tee -a $LOG
    cp $TUNING $W/${SLUG}.toml
    bundle
fi
if has sweep; then
    stage "sweep float32 $F32_SIZES"
    timeout -s INT $(left) $RB run --size $F32_SIZES --dtype float32 --rung $RUNGS --inputs random --max-time 0.15 \
        --out $W/pct_read_f32_${COMMIT}.csv > $W/run_f32.txt 2>&1
    echo "rc=$?" | tee -a $LOG; tail -3 $W/run_f32.txt >> $LOG
    bundle
fi
if has metrics; then
    stage "metrics: auto and cub float32, one size per band"
    timeout -s INT $(left) $RB run --metrics --size 2^12,2^16,2^20,2^24,2^28 --dtype float32 --rung auto,cub \
        --inputs random --max-time 0.1 --out $W/metrics_f32_${COMMIT}.csv \
        > $W/run_metrics.txt 2>&1
    echo "rc=$?" | tee -a $LOG
    bundle
fi
if has probe; then
    stage "probe: pingpong geometries at 2^30 float32 (does any reach the read?)"
    timeout -s INT $(left) $RB run --size 2^30 --dtype float32 --rung pingpong \
        --block 256,512,1024 --param blocks_per_sm=4,8,16 --param loads=4,8 \
        --inputs random --max-time 0.15 --out $W/probe_2p30_${COMMIT}.csv > $W/run_probe.txt 2>&1
    echo "rc=$?" | tee -a $LOG
    python3 - $W/probe_2p30_${COMMIT}.csv <<'PY' 2>&1 | tee -a $LOG
import sys, pandas as pd
d = pd.read_csv(sys.argv[1]); d = d[d.status == "ok"].sort_values("median_us")
for _, r in d.head(6).iterrows():
    print(f"probe {r.block} {r.params}: {r.median_us:.1f} us, pct_read {r.pct_read:.2f}")
PY
    bundle
fi
if has others; then
    stage "sweep int32,float16,bfloat16 $OTHER_SIZES"
    timeout -s INT $(left) $RB run --size $OTHER_SIZES --dtype int32,float16,bfloat16 --rung $RUNGS \
        --inputs random --max-time 0.15 --out $W/pct_read_i32_f16_bf16_${COMMIT}.csv \
        > $W/run_others.txt 2>&1
    echo "rc=$?" | tee -a $LOG; tail -3 $W/run_others.txt >> $LOG
    bundle
fi
stage "summary"
if compgen -G "$W/pct_read_*_${COMMIT}.csv" > /dev/null; then
    python3 scripts/pct_read_summary.py $W/pct_read_*_${COMMIT}.csv > $W/summary_${TAG}_${COMMIT}.txt 2>&1
else
    echo "no sweep in this call" > $W/summary_${TAG}_${COMMIT}.txt
fi
bundle
cat $W/summary_${TAG}_${COMMIT}.txt | cut -c1-90
