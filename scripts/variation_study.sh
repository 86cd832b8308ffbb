#!/usr/bin/env bash
# The cause study behind rounds (docs/samples.md): PROCESSES separate processes of
# scripts/variation_study.py at this tree's commit, each under CONDITIONS (a comma list;
# default: all five).
#   OUT=/tmp/out bash scripts/variation_study.sh [PROCESSES [CONDITIONS]]
. "$(dirname "$0")/lib.sh"
PROCESSES=${1:-3}
CONDITIONS=${2:-fixed_bind,fixed,fresh_input,fresh_flush,fresh_both}
for p in $(seq 1 "$PROCESSES"); do
    python3 scripts/variation_study.py "$L/variation_study_${SLUG}_${COMMIT}.jsonl" "$p" \
        --conditions "$CONDITIONS" || exit 1
done
