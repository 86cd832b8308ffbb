#!/usr/bin/env bash
# The cause study behind rounds (docs/samples.md): PROCESSES separate processes of
# scripts/variation_study.py, then the default run timed, at this tree's commit.
#   OUT=/tmp/out bash scripts/variation_study.sh [PROCESSES]
. "$(dirname "$0")/lib.sh"
PROCESSES=${1:-3}
for p in $(seq 1 "$PROCESSES"); do
    python3 scripts/variation_study.py "$L/variation_study_${SLUG}_${COMMIT}.jsonl" "$p" \
        || exit 1
done
