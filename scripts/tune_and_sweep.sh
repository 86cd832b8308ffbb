#!/usr/bin/env bash
# Tuning on one GPU: the GPU and its measured read ceiling, `reducebench tune` with its
# defaults (the tuning file is copied to $OUT), then the sweep 2^10..2^30 of auto, the
# best fixed rungs, one_block, CUB and PyTorch in float32 and int32 (CSVs to $OUT/<gpu>/,
# logs to $OUT/logs/: scripts/lib.sh), and a
# short table last: auto against CUB per size, and pct_ceiling at 2^28 and 2^30.
#
#   bash scripts/tune_and_sweep.sh                 info ceiling tune sweep summary (< 9 min)
#   bash scripts/tune_and_sweep.sh big summary     H200: 2^31 and 2^32 (about 5 min more)
#   bash scripts/tune_and_sweep.sh tests           the GPU tests of this work
#
# The big sizes take a second call on an H200: their inputs alone (made on the host,
# 16 GiB for 2^32 float32) take minutes. They use the tuning file tune wrote on this
# machine, or the shipped one under configs/tuning/ once committed.
source scripts/lib.sh
STAGES=${*:-"info ceiling tune sweep summary"}
W=$L
FREE_MIB=$(nvidia-smi --query-gpu=memory.free --format=csv,noheader,nounits | head -1)
PREFIX=$R/
BIG=0  # 2^32 float32 is 16 GiB: an H200, or any GPU with 100 GiB free
if [[ "$GPU" == *H200* ]] || (( FREE_MIB > 100000 )); then BIG=1; fi
RUNGS=auto,pingpong,vector_load,single_pass,cub,torch
stage() { echo "== $1 ($(date +%T), ${SECONDS}s in)"; }
has() { [[ " $STAGES " == *" $1 "* ]]; }

if has info; then
    stage "info: $GPU, ${FREE_MIB} MiB free"
    $RB info 2>&1 | tee $W/info_${SLUG}_$COMMIT.txt
fi

if has ceiling; then
    stage "read ceiling over 1 GiB and 4 GiB, every kernel"
    python3 - <<'PY' 2>&1 | tee $W/ceiling_${SLUG}_$COMMIT.txt
from reducebench.device import open_backend
from reducebench.device.ceiling import measure_ceiling
backend = open_backend(0)
peak = backend.info.peak_gbps
for nbytes in (1 << 30, 4 << 30):
    c = measure_ceiling(backend, nbytes=nbytes)
    print(f"ceiling {c.nbytes / 2**30:.2f} GiB: {c.describe()}, {100 * c.gbps / peak:.1f}% of "
          f"the theoretical {peak:.0f} GB/s")
    for t in c.timings:
        print(f"    {t.kernel:32s} {t.median_us:9.2f} us  {c.nbytes / t.median_us / 1e3:7.0f} GB/s"
              f"  ({t.samples} samples)")
PY
fi

if has tune; then
    stage "tune (defaults)"
    # where `auto` looks (named after the GPU as nvidia-smi spells it; CuPy's name is the
    # same on the H100 and H200: the sweep's variant column shows it if not)
    TUNING=$(python3 -c "from reducebench.ladder.auto import user_path; print(user_path('$GPU'))")
    /usr/bin/time -f "tune wall %e s" $RB tune --out $TUNING \
        --records ${PREFIX}tune_candidates_$COMMIT.csv 2>&1 | tee $W/tune_${SLUG}_$COMMIT.txt | tail -30
    cp $TUNING $OUT/ && echo "tuning file copied to $OUT/$(basename $TUNING)"
fi

if has sweep; then
    stage "sweep 2^10..2^30 float32,int32: $RUNGS"
    $RB run --size 2^10..2^30 --dtype float32,int32 --rung $RUNGS --max-time 0.3 \
        --out ${PREFIX}auto_sweep_$COMMIT.csv > $W/auto_sweep_${SLUG}_$COMMIT.txt 2>&1; echo "rc=$?"; tail -2 $W/auto_sweep_${SLUG}_$COMMIT.txt
    stage "one_block 2^10..2^20 (one SM streams it: larger n only grows)"
    $RB run --size 2^10..2^20 --dtype float32,int32 --rung one_block --max-time 0.3 \
        --out ${PREFIX}one_block_$COMMIT.csv > $W/one_block_${SLUG}_$COMMIT.txt 2>&1; echo "rc=$?"
    if (( BIG )) && ! has big; then
        echo "NOTE: $GPU: 'bash scripts/tune_and_sweep.sh big summary' adds 2^31 and 2^32"
    fi
fi

if has big; then
    if (( BIG )); then
        stage "sweep 2^31, 2^32 float32,int32 (CUB's CuPy binding stops at 2^31-1)"
        $RB run --size 2^31,2^32 --dtype float32,int32 --rung $RUNGS --max-time 0.3 \
            --out ${PREFIX}auto_sweep_big_$COMMIT.csv > $W/auto_sweep_big_${SLUG}_$COMMIT.txt 2>&1; echo "rc=$?"
    else
        echo "big: $GPU has ${FREE_MIB} MiB free, not enough for 2^32 float32; skipped"
    fi
fi

if has tests; then
    stage "GPU tests of the ceiling, one_block and auto"
    python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_tuning.py 2>&1 | tail -5
fi

if has summary; then
    stage "summary"
    python3 - $R $W/ceiling_${SLUG}_$COMMIT.txt <<'PY' 2>&1 | tee $W/auto_summary_${SLUG}_$COMMIT.txt
import glob, math, re, sys
import pandas as pd
out, ceiling_file = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(f"{out}/auto_sweep*.csv"))
if not files:
    sys.exit("no sweep CSV under " + out)
d = pd.concat([pd.read_csv(f) for f in files])
d = d[d.status == "ok"]
ceiling = float("nan")
try:
    ceiling = float(re.search(r"ceiling 1\.00 GiB: (\d+) GB/s", open(ceiling_file).read()).group(1))
except (OSError, AttributeError):
    pass
if "pct_ceiling" not in d or d.pct_ceiling.isna().all():
    d["pct_ceiling"] = 100 * d.gbps / ceiling
print(f"{d.gpu.iloc[0]}: auto against CUB (median us; ratio < 1: auto faster)")
for dtype, g in d.groupby("dtype"):
    print(f"\n{dtype:8s} {'n':>6s} {'auto':>10s} {'cub':>10s} {'auto/cub':>9s}  variant")
    for n, h in g.groupby("n"):
        auto, cub = h[h.rung == "auto"], h[h.rung == "cub"]
        a = auto.median_us.min() if len(auto) else math.nan
        c = cub.median_us.min() if len(cub) else math.nan
        flag = "  SLOWER" if a > c else ""
        variant = auto.variant.iloc[0] if len(auto) and "variant" in auto else ""
        print(f"{'':8s} 2^{int(n).bit_length() - 1:<4d} {a:10.2f} {c:10.2f} {a / c:9.3f}  "
              f"{str(variant)[:70]}{flag}")
print("\npct_ceiling (best of the fixed rungs and the libraries beside auto):")
for n in (2**28, 2**30, 2**32):
    for dtype, g in d[d.n == n].groupby("dtype"):
        best = g.sort_values("median_us").iloc[0]
        auto = g[g.rung == "auto"]
        a = auto.pct_ceiling.iloc[0] if len(auto) else math.nan
        print(f"  2^{n.bit_length() - 1} {dtype:8s} auto {a:6.2f}%   best {best.rung} "
              f"{best.pct_ceiling:6.2f}%")
PY
fi
stage "done"
