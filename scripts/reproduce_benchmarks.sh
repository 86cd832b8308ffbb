#!/usr/bin/env bash
# Measures again, on one GPU, the files BENCHMARKS.md's tables are printed from, then
# prints those tables and draws its figures: CSVs into $OUT/<gpu>/ named
# <what>_<commit>.csv as under results/, logs into $OUT/logs/ (scripts/lib.sh). Each
# stage is a few `reducebench` commands and fits one call of a 10-minute device; the
# multi-GPU table comes from scripts/multigpu_sweep.sh on a host with several GPUs.
# Needs the package with CuPy (pip install -e '.[cuda12]'), torch and Triton for their
# rungs, Nsight Compute for `counters`, and the `plot` extra for the figures.
#
#   bash scripts/reproduce_benchmarks.sh                  every stage (about 40 minutes)
#   bash scripts/reproduce_benchmarks.sh sweep big        some stages
#
# Stages: sweep (auto, CUB, torch.sum, float32 2^10..2^30), others (int32, float16,
# bfloat16 2^10..2^30), big (every dtype at 2^31 and 2^32), ladder (the whole ladder at
# 2^24 twice, then with random inputs), counters, energy, graph, published, tables.
# `auto` runs the tuning table found for this GPU (docs/tuning.md).
source scripts/lib.sh
STAGES=${*:-"sweep others big ladder counters energy graph published tables"}
has() { [[ " $STAGES " == *" $1 "* ]]; }
step() { echo "== $1 ($(date +%T))"; }
TOP="--rung auto,cub,torch --inputs random --max-time 0.15"

if has sweep; then
    step "auto, CUB and torch.sum against the same-size read, float32"
    $RB run --size 2^10..2^30 --dtype float32 $TOP --out $R/pct_read_f32_$COMMIT.csv \
        > $L/run_pct_read_f32_${SLUG}_$COMMIT.txt 2>&1
fi
if has others; then
    step "the same, int32, float16, bfloat16"
    $RB run --size 2^10..2^30 --dtype int32,float16,bfloat16 $TOP \
        --out $R/pct_read_i32_f16_bf16_$COMMIT.csv > $L/run_pct_read_others_${SLUG}_$COMMIT.txt 2>&1
fi
if has big; then
    step "every dtype at 2^31 and 2^32 (exact inputs, made on the host)"
    $RB run --size 2^31,2^32 --dtype float32,int32,float16,bfloat16 --rung auto,torch \
        --out $R/pct_read_big_$COMMIT.csv > $L/run_pct_read_big_${SLUG}_$COMMIT.txt 2>&1
fi
if has ladder; then
    step "the whole ladder at 2^24, twice, then with random inputs"
    for round in 1 2; do
        $RB run --size 2^24 --seed 20261123 --out $R/default_f32_seed20261123_r${round}_$COMMIT.csv \
            > $L/default_run_r${round}_${SLUG}_$COMMIT.txt 2>&1
    done
    $RB run --size 2^24 --inputs random --out $R/run_2p24_$COMMIT.csv \
        > $L/run_2p24_${SLUG}_$COMMIT.txt 2>&1
fi
if has counters; then
    step "hardware counters: the ladder at 2^24, auto and CUB per band"
    $RB run --size 2^24 --rung all,cupy --metrics --out $R/metrics_f32_$COMMIT.csv \
        > $L/run_metrics_${SLUG}_$COMMIT.txt 2>&1
    $RB run --metrics --size 2^12,2^16,2^20,2^24,2^28 --rung auto,cub --inputs random \
        --max-time 0.1 --out $R/metrics_auto_f32_$COMMIT.csv > $L/run_metrics_auto_${SLUG}_$COMMIT.txt 2>&1
fi
if has energy; then
    step "energy per reduction at 2^24 and 2^28"
    $RB run --size 2^24,2^28 --rung all,cupy --energy --max-time 0.3 \
        --out $R/energy_f32_$COMMIT.csv > $L/run_energy_${SLUG}_$COMMIT.txt 2>&1
fi
if has graph; then
    step "single launch and graph replay, 2^10..2^28"
    for timing in single graph; do
        $RB run --size 2^10..2^28 --rung shfl,vector_load,pingpong,cub --timing $timing \
            --max-time 0.2 --out $R/sweep_${timing}_$COMMIT.csv > $L/run_sweep_${timing}_${SLUG}_$COMMIT.txt 2>&1
    done
fi
if has published; then
    step "Harris's steps"
    $RB run --config configs/harris.toml --out $R/harris_$COMMIT.csv > $L/run_harris_${SLUG}_$COMMIT.txt 2>&1
fi
if has tables; then
    step "tables and figures"
    T="python3 scripts/bench_tables.py"
    P="python3 scripts/pct_read_summary.py"
    SWEEPS="$R/pct_read_big_$COMMIT.csv $R/pct_read_f32_$COMMIT.csv $R/pct_read_i32_f16_bf16_$COMMIT.csv"
    {
        $T gpus $R/pct_read_f32_$COMMIT.csv; echo
        $P --wide-pct-read $SWEEPS; echo
        $P --wide-over-read $SWEEPS; echo
        $P --wide-ratio $SWEEPS; echo
        $T ladder $R/default_f32_seed20261123_r1_$COMMIT.csv $R/default_f32_seed20261123_r2_$COMMIT.csv; echo
        $T counters $R/metrics_f32_$COMMIT.csv; echo
        $T band-counters $R/metrics_auto_f32_$COMMIT.csv; echo
        $T accuracy $R/run_2p24_$COMMIT.csv; echo
        $T energy $R/energy_f32_$COMMIT.csv; echo
        $T graph $R/sweep_single_$COMMIT.csv $R/sweep_graph_$COMMIT.csv; echo
        $T published harris $R/harris_$COMMIT.csv
    } > $OUT/benchmarks_tables_${SLUG}_$COMMIT.md
    $RB plot $SWEEPS --y pct_read -o $R/pct_read_$COMMIT.png
    $RB plot $R/sweep_single_$COMMIT.csv $R/sweep_graph_$COMMIT.csv -o $R/sweep_single_vs_graph_$COMMIT.png
    echo "tables in $OUT/benchmarks_tables_${SLUG}_$COMMIT.md, CSVs and figures in $R"
fi
