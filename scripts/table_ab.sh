#!/usr/bin/env bash
# Two tuning tables for this GPU compared in one call, paired: `auto` float32 over SIZES
# with table A, then B, then A, then B (each a `reducebench run` with the same-size read
# on every row), so a difference is believed only if both rounds show it. Each table is
# put where `auto` looks first (the user's tuning folder, docs/tuning.md) for its runs;
# a tuning file already there is put back afterwards, whatever happens.
#
#   bash scripts/table_ab.sh OLD.toml NEW.toml        (SIZES=2^10..2^28 by default)
#   e.g. OLD.toml from `git show 095c28a:configs/tuning/nvidia-h200.toml`
# Files (scripts/lib.sh): $OUT/<gpu>/table_ab_<commit>/{A,B}_<round>.csv, their run
# output, and summary.txt.
source scripts/lib.sh
set -e
A=${1:?table A}; B=${2:?table B}
SIZES=${SIZES:-2^10..2^28}
W=$R/table_ab_$COMMIT; mkdir -p $W
USER_TABLE=$(python3 -c "from reducebench.ladder.auto import user_path; print(user_path('$GPU'))")
mkdir -p "$(dirname "$USER_TABLE")"
SAVED=""
if [ -f "$USER_TABLE" ]; then SAVED=$(mktemp); cp "$USER_TABLE" "$SAVED"; fi
restore() { if [ -n "$SAVED" ]; then mv "$SAVED" "$USER_TABLE"; else rm -f "$USER_TABLE"; fi; }
trap restore EXIT
for round in 1 2; do
    for side in A B; do
        cp "${!side}" "$USER_TABLE"
        $RB run --size $SIZES --dtype float32 --rung auto --inputs random \
            --max-time 0.15 --out $W/${side}_$round.csv > $W/${side}_$round.txt 2>&1
    done
done
python3 - $W <<'PY' | tee $W/summary.txt
import sys, pandas as pd
w = sys.argv[1]
runs = {(s, r): pd.read_csv(f"{w}/{s}_{r}.csv").set_index("n") for s in "AB" for r in (1, 2)}
pct = {k: run.pct_read for k, run in runs.items()}
sizes = sorted(set.intersection(*(set(p.index) for p in pct.values())))
# Where both tables pick the same variant, A and B run the same kernel: what separates
# them there is the noise of the measurement, the yardstick for the other rows.
variant = {s: runs[(s, 1)].variant.str.split(" [(]").str[0] for s in "AB"}
print(f"{'n':>11s} {'A1':>7s} {'B1':>7s} {'A2':>7s} {'B2':>7s}  better in both rounds")
for n in sizes:
    a1, b1, a2, b2 = (pct[k][n] for k in (("A", 1), ("B", 1), ("A", 2), ("B", 2)))
    both = "B" if b1 > a1 and b2 > a2 else "A" if a1 > b1 and a2 > b2 else ""
    same = variant["A"][n] == variant["B"][n]
    note = "(same variant: noise)" if same else f"A {variant['A'][n]} | B {variant['B'][n]}"
    print(f"{n:11d} {a1:7.2f} {b1:7.2f} {a2:7.2f} {b2:7.2f}  {both:1s}  {note}")
PY
