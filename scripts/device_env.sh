# Sourced by the device scripts: nvtx from the carried wheel, the project from source.
set -o pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"

# Three back-to-back `reducebench run --size 2^24` into $R (wall time of each printed by
# /usr/bin/time), then the per-rung max/min of their medians into $W/three_runs.txt.
three_default_runs() {
    for i in 1 2 3; do
        /usr/bin/time -f "run $i wall %e s" python3 -m reducebench run --size 2^24 \
            --out $R/h100_default_f32_run$i.csv > $W/default_run$i.txt 2>&1
        tail -1 $W/default_run$i.txt
    done
    python3 scripts/three_runs.py $R/h100_default_f32_run{1,2,3}.csv > $W/three_runs.txt
}
