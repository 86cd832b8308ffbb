#!/usr/bin/env bash
# Whether `compare` judges runs right on this GPU (docs/samples.md): false alarms on
# unchanged code, a real slowdown found, and what rounds cost in time.
#   bash scripts/verdict_checks.sh [STAGE ...]      stages: timing aa sensitivity
#   timing       `reducebench run --size 2^24` warm, at the code in $OLD_TREE (another
#                copy of the package, of commit $OLD_COMMIT, if given) and at this one:
#                the wall time of each
#   aa           `reducebench calibrate --runs 3 -- --size 2^20,2^24,2^28`: three runs of
#                this code, one process each, every pair compared
#   sensitivity  tests/fixtures/kernels/extra_read_grid_stride_sum.cu: a probe finds the
#                extra reading that makes examples/grid_stride_sum.cu 3% slower at 2^24 and
#                2^28 and 5% slower at 2^20; each is then run in its own process against
#                the unchanged example in another, and `compare --fail-on-regression`
#                must exit 1
# Files: $OUT/$SLUG/aa_run{1,2,3}_$COMMIT.csv, extra_read_probe_$COMMIT.csv,
# sensitivity_{base,slow}_{large,small}_$COMMIT.csv; logs in $OUT/logs/.
source scripts/lib.sh
STAGES=${*:-timing aa sensitivity}
K=tests/fixtures/kernels/extra_read_grid_stride_sum.cu
GRID="--rung none --grid per-sm=8 --finish atomic"

seconds() { python3 -c "import time; print(f'{time.time():.2f}')"; }

timed_run() {  # TREE COMMIT: a compile pass, then the default run at 2^24, timed
    local tree=$1 commit=$2 start end
    # the tree's own package first on the path, its own commit on its rows
    (cd "$tree" && PYTHONPATH="$PWD:${PYTHONPATH:-}" REDUCEBENCH_COMMIT=$commit \
        python3 -m reducebench run --size 2^24 --max-time 0.001 --min-samples 1 \
        --out "$L/compile_${SLUG}_$commit.csv" > /dev/null 2>&1)
    start=$(seconds)
    (cd "$tree" && PYTHONPATH="$PWD:${PYTHONPATH:-}" REDUCEBENCH_COMMIT=$commit \
        python3 -m reducebench run --size 2^24 --seed 20261123 \
        --out "$R/default_f32_seed20261123_$commit.csv" > "$L/default_${SLUG}_$commit.txt" 2>&1)
    end=$(seconds)
    echo "default run at $commit: $(python3 -c "print(f'{$end - $start:.1f}')") s" \
        | tee -a "$L/timing_${SLUG}_$COMMIT.txt"
}

for stage in $STAGES; do
    case $stage in
    timing)
        if [ -n "${OLD_TREE:-}" ]; then timed_run "$OLD_TREE" "${OLD_COMMIT:-old}"; fi
        timed_run . "$COMMIT"
        ;;
    aa)
        $RB calibrate --runs 3 --out "$R/aa_$COMMIT" -- --size 2^20,2^24,2^28 \
            > "$L/aa_${SLUG}_$COMMIT.txt" 2>&1
        echo "calibrate rc=$?" | tee -a "$L/aa_${SLUG}_$COMMIT.txt"
        for i in 1 2 3; do
            for suffix in csv samples.csv; do
                mv "$R/aa_$COMMIT/run$i.$suffix" "$R/aa_run${i}_$COMMIT.$suffix"
            done
        done
        rmdir "$R/aa_$COMMIT"
        tail -8 "$L/aa_${SLUG}_$COMMIT.txt"
        ;;
    sensitivity)
        probe=""
        for extra in 0 10 20 30 40 50 60 70 80 100 150 200; do probe="$probe --kernel $K:extra_read_$extra"; done
        $RB run $GRID $probe --size 2^20,2^24,2^28 --out "$R/extra_read_probe_$COMMIT.csv" \
            > "$L/extra_read_probe_${SLUG}_$COMMIT.txt" 2>&1
        read -r LARGE SMALL < <(python3 - "$R/extra_read_probe_$COMMIT.csv" <<'PY'
import sys
import pandas as pd
frame = pd.read_csv(sys.argv[1])
median = frame.set_index(["rung", "n"])["median_us"]
def slowdown(extra, n):
    return median[(f"extra_read_{extra}", n)] / median[("extra_read_0", n)] - 1
counts = sorted(int(r.rsplit("_", 1)[1]) for r in frame["rung"].unique())
large = next((c for c in counts if min(slowdown(c, 2**24), slowdown(c, 2**28)) >= 0.03), counts[-1])
small = next((c for c in counts if slowdown(c, 2**20) >= 0.05), counts[-1])
print(large, small)
PY
)
        echo "extra reading (per mille): $LARGE for 3% at 2^24 and 2^28, $SMALL for 5% at 2^20" \
            | tee "$L/sensitivity_${SLUG}_$COMMIT.txt"
        for trial in "large $LARGE 2^24,2^28" "small $SMALL 2^20"; do
            read -r name extra sizes <<< "$trial"
            mkdir -p "/tmp/extra_$extra"
            sed "s/^#define EXTRA_PERMILLE [0-9]*/#define EXTRA_PERMILLE $extra/" $K \
                > "/tmp/extra_$extra/grid_stride_sum.cu"
            $RB run $GRID --size "$sizes" --kernel examples/grid_stride_sum.cu:grid_stride_sum \
                --out "$R/sensitivity_base_${name}_$COMMIT.csv" > /dev/null 2>&1
            $RB run $GRID --size "$sizes" --kernel "/tmp/extra_$extra/grid_stride_sum.cu:grid_stride_sum" \
                --out "$R/sensitivity_slow_${name}_$COMMIT.csv" > /dev/null 2>&1
            $RB compare "$R/sensitivity_base_${name}_$COMMIT.csv" \
                "$R/sensitivity_slow_${name}_$COMMIT.csv" --fail-on-regression \
                >> "$L/sensitivity_${SLUG}_$COMMIT.txt" 2>&1
            echo "$name (extra $extra, $sizes): compare --fail-on-regression rc=$?" \
                | tee -a "$L/sensitivity_${SLUG}_$COMMIT.txt"
        done
        ;;
    *) echo "verdict_checks.sh: unknown stage $stage (timing, aa, sensitivity)" >&2; exit 2 ;;
    esac
done
