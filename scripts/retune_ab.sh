#!/usr/bin/env bash
# `reducebench tune` with this tree, then its table paired against the shipped one
# (scripts/table_ab.sh) for float32 over 2^10..2^28 and float16 over the same bytes,
# 2^11..2^29, in one device call. The user's tuning folder is moved aside for the call
# (and put back at the end, whatever happens), so the shipped table is what the pairing
# calls A.
#
#   bash scripts/retune_ab.sh
#   UP_TO=2^20 SWEEP=2^10..2^20 bash scripts/retune_ab.sh
#     UP_TO: the new table takes only the tuned bands up to that size, the shipped bands
#     above it (scripts/merge_tuning.py), and the pairings cover only the sizes it
#     changes; SWEEP: then, with the new table, read_reference_sweep.sh's sweep and
#     others stages at those sizes (their bundle: $OUT/<gpu>_<commit>.tar.gz)
# Files (scripts/lib.sh): $OUT/<gpu>/tuning_<gpu-slug>_<commit>.toml (the new table),
# tune_candidates_<commit>.csv, table_ab_*; $OUT/logs/tune_<gpu>_<commit>.txt and the
# pairings' summaries; all of it also bundled in $OUT/retune_ab_<gpu>_<commit>.tar.gz.
source scripts/lib.sh
set -e
USER_TABLES=$(python3 -c "from reducebench.ladder.auto import user_dir; print(user_dir())")
ASIDE=""
if [ -e "$USER_TABLES" ]; then ASIDE=$(mktemp -d); mv "$USER_TABLES" "$ASIDE/tuning"; fi
put_back() { rm -rf "$USER_TABLES"; if [ -n "$ASIDE" ]; then mv "$ASIDE/tuning" "$USER_TABLES"; fi; }
trap put_back EXIT
GPU_FILE=$(python3 -c "from reducebench.ladder.auto import gpu_slug; print(gpu_slug('$GPU'))")
SHIPPED=configs/tuning/$GPU_FILE.toml
NEW=$R/tuning_${GPU_FILE}_$COMMIT.toml
bundle() { tar czf $OUT/.partial.tgz -C $OUT $SLUG logs && mv $OUT/.partial.tgz $OUT/retune_ab_${SLUG}_$COMMIT.tar.gz; }
echo "== tune ($(date +%T))"
TUNED=$NEW
F32_PAIRED=2^10..2^28
F16_PAIRED=2^11..2^29
if [ -n "${UP_TO:-}" ]; then
    # Checked before a tune of minutes: a power of two written 2^k (the float16 sizes
    # below are 2^(k+1)) where a band of the shipped table ends.
    if ! [[ $UP_TO =~ ^2\^[0-9]+$ ]]; then echo "retune_ab.sh: UP_TO=$UP_TO: write it 2^k" >&2; exit 2; fi
    python3 - "$SHIPPED" "$UP_TO" <<'PY' || exit 2
import sys
from reducebench.core.sizes import parse_size
from reducebench.ladder.auto import load_table
table, up_to = load_table(sys.argv[1]), parse_size(sys.argv[2])
if not any(band.n_max == up_to for band in table.bands):
    sys.exit(f"retune_ab.sh: no band of {sys.argv[1]} ends at UP_TO={sys.argv[2]}")
PY
    TUNED=$R/tuning_${GPU_FILE}_tuned_$COMMIT.toml
    F32_PAIRED=2^10..$UP_TO
    F16_PAIRED=2^11..2^$(( ${UP_TO#2^} + 1 ))
fi
/usr/bin/time -f "tune wall %e s" $RB tune --out $TUNED --records $R/tune_candidates_$COMMIT.csv \
    > $L/tune_${SLUG}_$COMMIT.txt 2>&1
tail -32 $L/tune_${SLUG}_$COMMIT.txt | cut -c1-160
if [ -n "${UP_TO:-}" ]; then python3 scripts/merge_tuning.py $TUNED $SHIPPED $UP_TO $NEW; fi
bundle
echo "== float32 pairing $F32_PAIRED ($(date +%T))"
SIZES=$F32_PAIRED bash scripts/table_ab.sh $SHIPPED $NEW
bundle
echo "== float16 pairing $F16_PAIRED ($(date +%T))"
DTYPE=float16 SIZES=$F16_PAIRED bash scripts/table_ab.sh $SHIPPED $NEW
bundle
# The sweep gets what is left of a 600 s device call, and is skipped under a minute.
if [ -n "${SWEEP:-}" ] && (( 570 - SECONDS < 60 )); then
    echo "== sweep $SWEEP skipped: $(( 570 - SECONDS )) s left of 570"
elif [ -n "${SWEEP:-}" ]; then
    echo "== sweep $SWEEP with the new table ($(date +%T))"
    TABLE=$(python3 -c "from reducebench.ladder.auto import user_path; print(user_path('$GPU'))")
    mkdir -p "$(dirname "$TABLE")"; cp $NEW "$TABLE"
    set +e
    F32_SIZES=$SWEEP OTHER_SIZES=$SWEEP DEADLINE=$(( 570 - SECONDS )) \
        bash scripts/read_reference_sweep.sh sweep others
    set -e
fi
echo "== done ($(date +%T))"
