#!/usr/bin/env bash
# `reducebench tune` with this tree, then its table paired against the shipped one
# (scripts/table_ab.sh) for float32 over 2^10..2^28 and float16 over the same bytes,
# 2^11..2^29, in one device call. The user's tuning folder is moved aside for the call
# (and put back at the end, whatever happens), so the shipped table is what the pairing
# calls A.
#
#   bash scripts/retune_ab.sh
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
/usr/bin/time -f "tune wall %e s" $RB tune --out $NEW --records $R/tune_candidates_$COMMIT.csv \
    > $L/tune_${SLUG}_$COMMIT.txt 2>&1
tail -32 $L/tune_${SLUG}_$COMMIT.txt | cut -c1-160
bundle
echo "== float32 pairing ($(date +%T))"
bash scripts/table_ab.sh $SHIPPED $NEW
bundle
echo "== float16 pairing ($(date +%T))"
DTYPE=float16 SIZES=2^11..2^29 bash scripts/table_ab.sh $SHIPPED $NEW
bundle
echo "== done ($(date +%T))"
