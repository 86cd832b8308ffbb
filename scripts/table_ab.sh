#!/usr/bin/env bash
# Two tuning tables for this GPU compared in one call, paired: `auto` float32 over SIZES
# with table A, then B, then A, then B (each a `reducebench run` with the same-size read
# on every row), so a difference is believed only if both rounds show it. A table is
# put where `auto` looks first (the user's tuning folder, docs/tuning.md) for its runs.
#
#   bash scripts/table_ab.sh OLD.toml NEW.toml        (SIZES=2^10..2^28 by default)
# Files: $OUT/table_ab_<gpu>_<commit>.tgz holding <A|B>_<round>.csv and the summary.
set -e -o pipefail
A=${1:?table A}; B=${2:?table B}
SIZES=${SIZES:-2^10..2^28}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
W=/tmp/table_ab; rm -rf $W; mkdir -p $W
COMMIT=${REDUCEBENCH_COMMIT:-local}
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
USER_TABLE=$(python3 -c "from reducebench.ladder.auto import user_path; print(user_path('$GPU'))")
mkdir -p "$(dirname "$USER_TABLE")"
for round in 1 2; do
    for side in A B; do
        cp "${!side}" "$USER_TABLE"
        python3 -m reducebench run --size $SIZES --dtype float32 --rung auto --inputs random \
            --max-time 0.15 --out $W/${side}_$round.csv > $W/${side}_$round.txt 2>&1
    done
done
rm -f "$USER_TABLE"
python3 - $W <<'PY' | tee $W/summary.txt
import sys, pandas as pd
w = sys.argv[1]
pct = {(s, r): pd.read_csv(f"{w}/{s}_{r}.csv").set_index("n").pct_read for s in "AB" for r in (1, 2)}
print(f"{'n':>11s} {'A1':>7s} {'B1':>7s} {'A2':>7s} {'B2':>7s}  B-A both rounds")
for n in pct["A", 1].index:
    a1, b1, a2, b2 = (pct[k][n] for k in (("A", 1), ("B", 1), ("A", 2), ("B", 2)))
    both = "B" if b1 > a1 and b2 > a2 else "A" if a1 > b1 and a2 > b2 else ""
    print(f"{n:11d} {a1:7.2f} {b1:7.2f} {a2:7.2f} {b2:7.2f}  {both}")
PY
tar czf $OUT/table_ab_$(echo "$GPU" | awk '{print tolower($2)}')_$COMMIT.tgz -C /tmp table_ab
