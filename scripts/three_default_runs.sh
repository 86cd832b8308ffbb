#!/usr/bin/env bash
# Three back-to-back `reducebench run --size 2^24` (the default ladder, float32), each
# one's wall time printed by /usr/bin/time, then every rung's max/min of the three
# medians (scripts/three_runs.py): how much a median moves from one run to the next.
#   bash scripts/three_default_runs.sh      about 3 minutes
source scripts/lib.sh
for i in 1 2 3; do
    /usr/bin/time -f "run $i wall %e s" $RB run --size 2^24 \
        --out $R/default_f32_run${i}_$COMMIT.csv > $L/default_run${i}_$COMMIT.txt 2>&1
    tail -1 $L/default_run${i}_$COMMIT.txt
done
python3 scripts/three_runs.py $R/default_f32_run{1,2,3}_$COMMIT.csv | tee $L/three_runs_$COMMIT.txt
