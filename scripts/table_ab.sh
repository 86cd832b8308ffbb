#!/usr/bin/env bash
# Two tuning tables for this GPU compared in one call, paired: `auto` DTYPE over SIZES
# with table A, then B, then B, then A (each a `reducebench run` with the same-size read
# on every row), so a difference is believed only if both rounds show it. Each run gets
# its table through an XDG_CONFIG_HOME of its own (docs/tuning.md, "The tuning file"):
# your own tuning folder is never read or changed.
#
#   bash scripts/table_ab.sh OLD.toml NEW.toml        (SIZES=2^10..2^28, DTYPE=float32)
#   DTYPE=float16 SIZES=2^11..2^29 bash scripts/table_ab.sh OLD.toml NEW.toml
# Files (scripts/lib.sh): $OUT/<gpu>/table_ab_{a1,b1,b2,a2}[_<dtype>]_<commit>.csv (and
# their samples; the dtype only when not float32), their run output and the summary in
# $OUT/logs/table_ab_<gpu>[_<dtype>]_<commit>*.txt.
source scripts/lib.sh
set -e
A=${1:?table A}; B=${2:?table B}
SIZES=${SIZES:-2^10..2^28}
DTYPE=${DTYPE:-float32}
D=""; [ "$DTYPE" != float32 ] && D="_$DTYPE"
TABLES=$(mktemp -d)
trap 'rm -rf "$TABLES"' EXIT
for side in A B; do
    mkdir -p "$TABLES/$side/reducebench/tuning"
    cp "${!side}" "$TABLES/$side/reducebench/tuning/$(gpu_slug "$GPU").toml"
done
# A B, then B A: a drift of the machine during the call (clocks, temperature) favours
# neither table.
for round in 1 2; do
    sides="A B"; [ $round = 2 ] && sides="B A"
    for side in $sides; do
        XDG_CONFIG_HOME=$TABLES/$side $RB run --size $SIZES --dtype $DTYPE --rung auto --inputs random \
            --max-time 0.15 --out $R/table_ab_${side,,}${round}${D}_$COMMIT.csv \
            > $L/table_ab_${SLUG}${D}_$COMMIT.$side$round.txt 2>&1
    done
done
python3 - $R $COMMIT "$D" <<'PY' | tee $L/table_ab_${SLUG}${D}_$COMMIT.txt
import sys, pandas as pd
folder, commit, dtype = sys.argv[1:4]
runs = {(s, r): pd.read_csv(f"{folder}/table_ab_{s.lower()}{r}{dtype}_{commit}.csv").set_index("n")
        for s in "AB" for r in (1, 2)}
sizes = sorted(set.intersection(*(set(run.index) for run in runs.values())))
# Where both tables pick the same variant, A and B run the same kernel: what separates
# them there is the noise of the measurement, the yardstick for the other rows.
variant = {s: runs[(s, 1)].variant.str.split(" [(]").str[0] for s in "AB"}
print("pct_read of each run; B - A: B's median minus A's in the same round, in us")
print(f"{'n':>11s} {'A1':>7s} {'B1':>7s} {'A2':>7s} {'B2':>7s} {'B-A 1':>7s} {'B-A 2':>7s}"
      "  faster in both rounds")
for n in sizes:
    pct = [runs[k].pct_read[n] for k in (("A", 1), ("B", 1), ("A", 2), ("B", 2))]
    gap = [runs[("B", r)].median_us[n] - runs[("A", r)].median_us[n] for r in (1, 2)]
    both = "B" if max(gap) < 0 else "A" if min(gap) > 0 else ""
    same = variant["A"][n] == variant["B"][n]
    note = "(same variant: noise)" if same else f"A {variant['A'][n]} | B {variant['B'][n]}"
    print(f"{n:11d} {pct[0]:7.2f} {pct[1]:7.2f} {pct[2]:7.2f} {pct[3]:7.2f} {gap[0]:+7.3f} "
          f"{gap[1]:+7.3f}  {both:1s}  {note}")
PY
