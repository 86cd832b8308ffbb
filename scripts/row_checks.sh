#!/usr/bin/env bash
# The row ladder on this GPU (docs/rows.md, "On a GPU"): its GPU tests, the landscape of
# every row rung over the rows sweep, and row_auto against the libraries over it.
#   bash scripts/row_checks.sh [STAGE ...]      stages: tests landscape variants long
#                                               bands auto
#   tests      pytest -m gpu tests/test_gpu_rows.py (every row rung exact at the odd
#              shapes, the planted kernels failing, the same-shape read, tune --shapes)
#   landscape  `reducebench run --shape sweep:rows@$TOTALS --rung all`: every rung at
#              its defaults, row_auto and the libraries ($TOTALS default 2^20..2^28)
#   variants   row_multi's loads x rows a group x load hints over rows of 4 to 128, with
#              the lanes that make a row one round of loads (lanes=0: its fast path),
#              row_tile's and row_multi's variants over rows of 33 (with and without
#              evict-first), row_vec_block's block x loads x evict-first over rows of
#              2^13 to 2^17 (block), at 2^E elements for E in $EXPONENTS (default 20 22
#              24 26 28); row_multi a warp a row over rows of 256 to 4096 (loads x
#              hints: wide), row_vec_block's and row_block's blocks over rows of 512 to
#              4096 (mid), and row_tile's blocks x loads x evict-first over rows of 33
#              (tile), at every total of $LONG_TOTALS (a band of rows of 1000 holds
#              shapes of two octaves of the total: 2^27 x 1000 / 1024 is in 2^28's,
#              and a variant measured at only some of a band's shapes is not scored);
#              $VARIANTS names which of the six sweeps run (default narrow wide odd
#              block mid tile)
#   long       row_split's block x blocks_per_sm x L2 hint and row_vec_block's block
#              over every power-of-two COLS from 2^13 up (and rows of 1000003) at 2^E
#              elements for E in $LONG_TOTALS (default every E from 20 to 28)
#   bands      scripts/row_defaults.py --toml over the landscape, variants (narrow,
#              wide, odd, block, mid, tile) and long files under $OUT/$SLUG (any commit;
#              where a kernel changed, the one measured last counts): the row bands they
#              give, as a tuning file's [[row_band]] tables (run the landscape with
#              TOTALS=2^20..2^28:2 to match the variants)
#   auto       `reducebench run --shape sweep:rows --rung row_auto,torch_rows,cub_rows,
#              triton_rows`, then `reducebench plot` on it: its last line says how
#              row_auto stands (within a 32 ns tick of the fastest library, 95% of the
#              read from 2^24 elements)
# Each sweep runs --rounds 1 (every case is written as it completes) under
# `timeout -s INT $SECONDS_EACH` (default 540); a second call at the same commit resumes
# the file where the last one stopped. Files: $OUT/$SLUG/rows_sweep_$COMMIT.csv and
# rows_auto_$COMMIT.csv, the latter's figures in $OUT/figures_rows_auto_$COMMIT.tgz; logs
# in $OUT/logs/.
source scripts/lib.sh
STAGES=${*:-tests landscape auto}
TOTALS=${TOTALS:-2^20..2^28}
EXPONENTS=${EXPONENTS:-20 22 24 26 28}  # the variants stage's totals, 2^E elements
LONG_TOTALS=${LONG_TOTALS:-20 21 22 23 24 25 26 27 28}  # the long, mid and tile sweeps', 2^E
VARIANTS=${VARIANTS:-narrow wide odd block mid tile}  # the variants stage's sweeps
SECONDS_EACH=${SECONDS_EACH:-540}
SWEEP="--rounds 1 --max-time 0.02 --seed 20261127"

shapes() {  # "E..." COLS...: ROWSxCOLS for each COLS at 2^E elements (where COLS <= 2^E),
    # ROWS = 2^E / COLS rounded to the nearest (halves up), as sweep:rows rounds
    python3 -c "import sys
print(','.join(f'{max(1, (2 * 2**int(e) + c) // (2 * c))}x{c}' for c in map(int, sys.argv[2:])
               for e in sys.argv[1].split() if c <= 2**int(e)))" "$@"
}

sweep() {  # FILE LOG ARGS...: a sweep into FILE, resumed where FILE already holds cases
    local file=$1 log=$2
    shift 2
    if [ -s "$file" ]; then
        COLUMNS=200 timeout -s INT "$SECONDS_EACH" $RB run --resume "$file" >> "$log" 2>&1
    else
        COLUMNS=200 timeout -s INT "$SECONDS_EACH" $RB run "$@" $SWEEP --out "$file" > "$log" 2>&1
    fi
    echo "rc=$?" >> "$log"
    tail -n 3 "$log"
}

for stage in $STAGES; do
    case $stage in
    tests)
        python3 -m pytest -m gpu -q -p no:cacheprovider -rfE -n 8 tests/test_gpu_rows.py \
            > "$L/pytest_gpu_${SLUG}_${COMMIT}_rows.log" 2>&1
        echo "rows rc=$?" | tee -a "$L/pytest_gpu_${SLUG}_${COMMIT}_rows.log"
        tail -n 3 "$L/pytest_gpu_${SLUG}_${COMMIT}_rows.log"
        ;;
    landscape)
        sweep "$R/rows_sweep_$COMMIT.csv" "$L/rows_sweep_${SLUG}_$COMMIT.txt" \
            --shape "sweep:rows@$TOTALS" --rung all
        ;;
    variants)
        wants() { [[ " $VARIANTS " == *" $1 "* ]]; }
        wants narrow && sweep "$R/rows_multi_narrow_$COMMIT.csv" \
            "$L/rows_multi_narrow_${SLUG}_$COMMIT.txt" \
            --shape "$(shapes "$EXPONENTS" 4 8 16 32 64 128)" --rung row_multi \
            --param lanes=0 --param loads=1,2,4 --param group_rows=1,2,4,8 \
            --param l2_prefetch=0,1 --param evict_first=0,1
        wants wide && sweep "$R/rows_multi_wide_$COMMIT.csv" \
            "$L/rows_multi_wide_${SLUG}_$COMMIT.txt" \
            --shape "$(shapes "$LONG_TOTALS" 256 512 1000 1024 2048 4096)" --rung row_multi \
            --param lanes=32 \
            --param loads=2,4,8 --param l2_prefetch=0,1 --param evict_first=0,1
        wants odd && sweep "$R/rows_odd_$COMMIT.csv" \
            "$L/rows_odd_${SLUG}_$COMMIT.txt" \
            --shape "$(shapes "$EXPONENTS" 33)" --rung row_tile,row_multi --param loads=2,4,8 \
            --param l2_prefetch=0,1 --param lanes=2,4,8 --param evict_first=0,1
        wants block && sweep "$R/rows_block_$COMMIT.csv" \
            "$L/rows_block_${SLUG}_$COMMIT.txt" \
            --shape "$(shapes "$EXPONENTS" 8192 32768 131072)" --rung row_vec_block \
            --block 256,512,1024 --param loads=2,4,8 --param evict_first=0,1
        wants mid && sweep "$R/rows_mid_$COMMIT.csv" \
            "$L/rows_mid_${SLUG}_$COMMIT.txt" \
            --shape "$(shapes "$LONG_TOTALS" 512 1000 1024 2048 4096)" \
            --rung row_vec_block,row_block --block 256,512 --param loads=2,4 \
            --param evict_first=0,1
        wants tile && sweep "$R/rows_tile_$COMMIT.csv" \
            "$L/rows_tile_${SLUG}_$COMMIT.txt" \
            --shape "$(shapes "$LONG_TOTALS" 33)" --rung row_tile --block 64,128,256 \
            --param loads=2,4 --param l2_prefetch=0 --param evict_first=0,1
        ;;
    long)
        # long rows at every total of $LONG_TOTALS (the octaves between the others too):
        # each power-of-two COLS from 2^13 up and rows of 1000003, as sweep:rows has them
        sweep "$R/rows_long_$COMMIT.csv" "$L/rows_long_${SLUG}_$COMMIT.txt" \
            --shape "$(shapes "$LONG_TOTALS" $(for k in $(seq 13 28); do echo $((2**k)); done) \
                1000003)" --rung row_split,row_vec_block --block 256,512 \
            --param blocks_per_sm=16,32 --param l2_prefetch=0,1
        ;;
    bands)
        # every table source under $R, whatever commit measured it
        python3 scripts/row_defaults.py --toml $(ls \
            "$R"/rows_{sweep,multi_narrow,multi_wide,odd,block,mid,tile,long}_*.csv 2>/dev/null |
            grep -v samples) > "$L/row_bands_${SLUG}_$COMMIT.toml" 2>&1
        grep -c "row_band" "$L/row_bands_${SLUG}_$COMMIT.toml"
        ;;
    auto)
        sweep "$R/rows_auto_$COMMIT.csv" "$L/rows_auto_${SLUG}_$COMMIT.txt" \
            --shape sweep:rows --rung row_auto,torch_rows,cub_rows,triton_rows
        mkdir -p "$OUT/figures"
        $RB plot "$R/rows_auto_$COMMIT.csv" -o "$OUT/figures/rows_auto_$COMMIT.png" | tail -n 1
        # one archive, not a file a figure: a machine that sends back few files sends it
        tar -czf "$OUT/figures_rows_auto_$COMMIT.tgz" -C "$OUT" figures && rm -rf "$OUT/figures"
        ;;
    *)
        echo "row_checks.sh: unknown stage $stage (tests landscape variants long bands auto)" >&2
        exit 2
        ;;
    esac
done
