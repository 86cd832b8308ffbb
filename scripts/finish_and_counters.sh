#!/usr/bin/env bash
# Issue 27's remaining evidence on one GPU, in one device call: the finish lab
# (scripts/finish_lab.py: what each step of one_shot's finish costs, and shorter
# finishes), `run --metrics` of auto (one_shot) and CUB float32 at one size per band,
# and auto, torch.sum at 2^31 and 2^32 for every dtype (exact inputs: the host makes them
# on every core, where random ones take minutes per size); on request the README's
# default run and the int32, float16, bfloat16 sweep of scripts/read_reference_sweep.sh. Files go to $W
# and are bundled into $OUT/<gpu>_<commit>.tar.gz after every stage; the lab's summary is
# printed last.
#
#   bash scripts/finish_and_counters.sh                 every stage
#   bash scripts/finish_and_counters.sh lab             some stages
set -o pipefail
STAGES=${*:-"lab metrics big"}  # also: default, others
LAB_FLAGS=${LAB_FLAGS:-}  # --pieces: the second lab set
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/rbfinish; mkdir -p $W  # kept between invocations in one call
RB="python3 -m reducebench"
COMMIT=${REDUCEBENCH_COMMIT:-unknown}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$GPU" in *H200*) TAG=h200 ;; *H100*) TAG=h100 ;; *) TAG=gpu ;; esac
LOG=$W/log_${TAG}_${COMMIT}.txt
stage() { echo "== $1 ($(date +%T), ${SECONDS}s in)" | tee -a $LOG; }
has() { [[ " $STAGES " == *" $1 "* ]]; }
bundle() { tar czf $OUT/.partial.tgz -C $W . && mv $OUT/.partial.tgz $OUT/finish_${TAG}_${COMMIT}.tar.gz; }
DEADLINE=${DEADLINE:-570}
left() { echo $(( DEADLINE - SECONDS > 5 ? DEADLINE - SECONDS : 5 )); }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv >> $LOG 2>&1
if has lab; then
    stage "finish lab"
    timeout -s INT $(left) python3 scripts/finish_lab.py $W/finish_lab_${TAG}_${COMMIT}.csv $LAB_FLAGS \
        > $W/finish_lab_${TAG}_${COMMIT}.txt 2>&1
    echo "lab rc=$?" | tee -a $LOG
    bundle
fi
if has metrics; then
    stage "metrics: auto and cub float32, one size per band"
    timeout -s INT $(left) $RB run --metrics --size 2^12,2^16,2^20,2^24,2^28 --dtype float32 \
        --rung auto,cub --inputs random --max-time 0.1 --out $W/metrics_f32_${COMMIT}.csv \
        > $W/run_metrics.txt 2>&1
    echo "metrics rc=$?" | tee -a $LOG; tail -3 $W/run_metrics.txt >> $LOG
    bundle
fi
if has default; then
    stage "the README's default run (seed 20261123)"
    timeout -s INT $(left) $RB run --size 2^24 --seed 20261123 \
        --out $W/default_f32_seed20261123_${COMMIT}.csv > $W/default_run_seed20261123_${COMMIT}.txt 2>&1
    echo "default rc=$?" | tee -a $LOG
    bundle
fi
if has others; then
    stage "int32, float16, bfloat16 2^10..2^28, 2^30 (random inputs)"
    timeout -s INT $(left) $RB run --size 2^10..2^28,2^30 --dtype int32,float16,bfloat16 \
        --rung auto,cub,torch --inputs random --max-time 0.15 \
        --out $W/pct_read_i32_f16_bf16_${COMMIT}.csv > $W/run_others.txt 2>&1
    echo "others rc=$?" | tee -a $LOG
    bundle
fi
if has big; then
    stage "every dtype at 2^31 and 2^32"
    timeout -s INT $(left) $RB run --size 2^31,2^32 --dtype float32,int32,float16,bfloat16 \
        --rung auto,torch --max-time 0.15 --out $W/pct_read_big_${COMMIT}.csv \
        > $W/run_big.txt 2>&1
    echo "big rc=$?" | tee -a $LOG; tail -12 $W/run_big.txt >> $LOG
    bundle
fi
stage "done"
bundle
[ -f $W/finish_lab_${TAG}_${COMMIT}.txt ] && grep -E "^(float32|int32) 2\^" $W/finish_lab_${TAG}_${COMMIT}.txt | cut -c1-400
python3 scripts/pct_read_summary.py $W/pct_read_*_${COMMIT}.csv 2>/dev/null | cut -c1-90
tail -20 $LOG
