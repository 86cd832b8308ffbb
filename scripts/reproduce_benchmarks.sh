#!/usr/bin/env bash
# Regenerates, on one GPU, every file BENCHMARKS.md is printed from, then its tables and
# figures: CSVs into $OUT/<gpu>/ named <what>_<commit>.csv as under results/ (scripts/
# lib.sh), tables and figures into $OUT. Each step is one `reducebench` command; the
# committed files under results/ were made by these (results/README.md). About 15
# minutes on an H100; the multi-GPU figures come from scripts/multigpu_sweep.sh on a
# host with 2 GPUs. Needs only the package: pip install -e '.[cuda12]' (add `plot` for
# the two figures, and torch for its rung; without them those steps say so and the
# rest runs), then
#
#   bash scripts/reproduce_benchmarks.sh
#
# `tune` writes this GPU's tuning file where `auto` looks for it
# (~/.config/reducebench/tuning/<gpu>.toml), replacing one already there.
source scripts/lib.sh
T="python3 scripts/bench_tables.py"
step() { echo "== $1 ($(date +%T))"; }

step "tune, then auto, the fixed rungs, CUB and PyTorch from 2^10 to 2^30"
$RB tune --records $R/tune_candidates_$COMMIT.csv
$RB run --size 2^10..2^30 --dtype float32,int32 --rung auto,pingpong,vector_load,single_pass,cub,torch \
    --max-time 0.3 --out $R/auto_sweep_$COMMIT.csv
$RB run --size 2^10..2^20 --dtype float32,int32 --rung one_block --max-time 0.3 --out $R/one_block_$COMMIT.csv
step "the ladder at 2^24: default, random inputs, hardware counters, energy"
$RB run --size 2^24 --rung all,cupy --out $R/default_f32_$COMMIT.csv
$RB run --size 2^24 --rung all,cupy --inputs random --out $R/random_f32_$COMMIT.csv
$RB run --size 2^24 --rung all,cupy --metrics --out $R/metrics_f32_$COMMIT.csv
$RB run --size 2^24,2^28 --rung all,cupy --energy --max-time 0.3 --out $R/energy_f32_$COMMIT.csv
step "single launch and graph replay, 2^10..2^28"
$RB run --size 2^10..2^28 --rung shfl,vector_load,pingpong,cub --max-time 0.2 --out $R/sweep_single_$COMMIT.csv
$RB run --size 2^10..2^28 --rung shfl,vector_load,pingpong,cub --timing graph --max-time 0.2 \
    --out $R/sweep_graph_$COMMIT.csv
step "the published ladders"
$RB run --config configs/harris.toml --out $R/harris_$COMMIT.csv
$RB run --config configs/seed004.toml --out $R/seed004_$COMMIT.csv
step "tables and figures"
{
    $T $R/auto_sweep_$COMMIT.csv --auto; echo
    $T $R/default_f32_$COMMIT.csv; echo
    $T $R/metrics_f32_$COMMIT.csv --counters; echo
    $T $R/random_f32_$COMMIT.csv --accuracy; echo
    $T $R/energy_f32_$COMMIT.csv --energy; echo
    $T $R/harris_$COMMIT.csv --published harris; echo
    $T $R/seed004_$COMMIT.csv --published seed004
} > $OUT/benchmarks_tables.md
$RB plot $R/auto_sweep_$COMMIT.csv -o $R/auto_sweep_$COMMIT.png
$RB plot $R/sweep_single_$COMMIT.csv $R/sweep_graph_$COMMIT.csv -o $R/sweep_single_vs_graph_$COMMIT.png
$RB explain --from $R/metrics_f32_$COMMIT.csv > $OUT/explain.txt
echo "tables in $OUT/benchmarks_tables.md, CSVs and figures in $R"
