#!/usr/bin/env bash
# Regenerates, on one GPU, every file BENCHMARKS.md is printed from, then its tables and
# figures, into $OUT (default /tmp/out). Each step is one `reducebench` command; the
# committed files under results/ were made by exactly these (their names carry the
# commit). About 15 minutes on an H100; the multi-GPU figures come from
# scripts/multigpu_sweep.sh on a host with 2 GPUs.
#
#   REDUCEBENCH_COMMIT=$(git rev-parse --short HEAD) bash scripts/reproduce_benchmarks.sh
source scripts/device_env.sh
RB="python3 -m reducebench"
T="python3 scripts/bench_tables.py"
R=$OUT/results; mkdir -p $R
step() { echo "== $1 ($(date +%T))"; }

step "tune, then auto, the fixed rungs, CUB and PyTorch from 2^10 to 2^30"
$RB tune --out ~/.config/reducebench/tuning/this_gpu.toml --records $R/tune_candidates.csv
$RB run --size 2^10..2^30 --dtype float32,int32 --rung auto,pingpong,vector_load,single_pass,cub,torch \
    --max-time 0.3 --out $R/auto_sweep.csv
$RB run --size 2^10..2^20 --dtype float32,int32 --rung one_block --max-time 0.3 --out $R/one_block.csv
step "the ladder at 2^24: default, random inputs, hardware counters, energy"
$RB run --size 2^24 --rung all,cupy --out $R/default_f32.csv
$RB run --size 2^24 --rung all,cupy --inputs random --out $R/random_f32.csv
$RB run --size 2^24 --rung all,cupy --metrics --out $R/metrics_f32.csv
$RB run --size 2^24,2^28 --rung all,cupy --energy --max-time 0.3 --out $R/energy_f32.csv
step "single launch and graph replay, 2^10..2^28"
$RB run --size 2^10..2^28 --rung shfl,vector_load,pingpong,cub --max-time 0.2 --out $R/sweep_single.csv
$RB run --size 2^10..2^28 --rung shfl,vector_load,pingpong,cub --timing graph --max-time 0.2 \
    --out $R/sweep_graph.csv
step "the published ladders"
$RB run --config configs/harris.toml --out $R/harris.csv
$RB run --config configs/seed004.toml --out $R/seed004.csv
step "tables and figures"
{
    $T $R/auto_sweep.csv --auto; echo
    $T $R/default_f32.csv; echo
    $T $R/metrics_f32.csv --counters; echo
    $T $R/random_f32.csv --accuracy; echo
    $T $R/energy_f32.csv --energy; echo
    $T $R/harris.csv --published harris; echo
    $T $R/seed004.csv --published seed004
} > $OUT/benchmarks_tables.md
$RB plot $R/auto_sweep.csv -o $OUT/auto_sweep.png
$RB plot $R/sweep_single.csv $R/sweep_graph.csv -o $OUT/sweep_single_vs_graph.png
$RB explain --from $R/metrics_f32.csv > $OUT/explain.txt
echo "tables in $OUT/benchmarks_tables.md, figures in $OUT"
