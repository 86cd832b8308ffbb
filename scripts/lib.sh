# Sourced by the other scripts (not run): where their files go and how they are named.
# Nothing here installs anything: the scripts run wherever `python3 -m reducebench` works
# (after `pip install -e '.[cuda12]'`). On this project's lent GPU machine, wrap them in
# scripts/device_env.sh (scripts/README.md).
#
#   OUT          output folder (default /tmp/out); files go to $OUT/$SLUG/ and $OUT/logs/,
#                so that they can be copied into results/ as they are (results/README.md)
#   GPU_SLUG     results/ folder for this machine; default: the GPU model in lower case
#                (NVIDIA H100 80GB HBM3 -> h100, NVIDIA H200 -> h200)
#   REDUCEBENCH_COMMIT   the commit in file names; default: git rev-parse --short HEAD
#
# A script that sources this file prints its own header comment for -h or --help, and
# does nothing else (tests/test_scripts.py runs every script so).
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
fi
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
RB="python3 -m reducebench"
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
GPU_COUNT=$(nvidia-smi -L 2>/dev/null | wc -l)
SLUG=${GPU_SLUG:-$(echo "${GPU:-unknown}" | sed 's/^NVIDIA //' | awk '{print tolower($1)}')}
COMMIT=${REDUCEBENCH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo local)}
R=$OUT/$SLUG
L=$OUT/logs
mkdir -p "$R" "$L"

# A GPU model's tuning file name, as reducebench names it (docs/tuning.md):
# NVIDIA H100 80GB HBM3 -> nvidia-h100-80gb-hbm3
gpu_slug() {
    local slug
    slug=$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-+//; s/-+$//')
    printf '%s\n' "${slug:-gpu}"
}
