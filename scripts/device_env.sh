#!/usr/bin/env bash
# This project's lent GPU machine only: it cannot reach a package index, and its Python
# lacks the nvtx package, so the nvtx wheel travels with the working tree in .whl/ (not
# committed) and is installed to /tmp/site; the project runs from source. Then the
# command given runs in that environment, with REDUCEBENCH_COMMIT set to this tree's
# commit (the machine's copy of the tree has no .git):
#
#   REDUCEBENCH_COMMIT=$(git rev-parse --short HEAD) \
#       bash scripts/device_env.sh bash scripts/reproduce_benchmarks.sh
#
# On any other machine run the scripts directly after `pip install -e '.[cuda12]'`.
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then  # the header above, nothing else
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
fi
set -e -o pipefail
if ! compgen -G ".whl/*.whl" > /dev/null; then
    echo "scripts/device_env.sh: no .whl/*.whl here (the nvtx wheel this machine needs);" \
         "elsewhere run the script itself after pip install -e '.[cuda12]'" >&2
    exit 2
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl
export PYTHONPATH=$PWD:/tmp/site
exec "$@"
