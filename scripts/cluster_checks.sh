#!/usr/bin/env bash
# The launcher paths of docs/cluster.md on one host with 2 GPUs: the runs whose files
# results/h200x2/ keeps, then the GPU tests of tests/test_gpu_cluster.py.
#   REDUCEBENCH_COMMIT=$(git rev-parse --short HEAD) OUT=/tmp/out bash scripts/cluster_checks.sh
# Needs the package importable (pip install -e '.[cuda12]' or PYTHONPATH), torch for
# torchrun, and mpi4py + mpirun for the mpirun step (skipped without). About 4 minutes.
# Writes to $OUT: cluster_log.txt (every command's output, in order) and the results files
# multigpu_{torchrun,oneprocess,twonodes,mpirun}_C.csv and fleet_torchrun_C{,.samples}.csv.
# NCCL_* variables are left as found (NCCL_NVLS_ENABLE=0 stays in force).
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then  # the header above, nothing else
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
fi
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
C=${REDUCEBENCH_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
LOG=$OUT/cluster_log.txt
export REDUCEBENCH_CLUSTER_LOG=$LOG PYTHONUNBUFFERED=1
TR="python3 -m torch.distributed.run"
CASES="--size 2^24,2^30 --nccl --bytes 2^20,2^30"

step() { echo "===== $* ($(date -u +%T))" >> "$LOG"; echo "$*"; }
ran() { echo "exit $1" >> "$LOG"; echo "  exit $1"; }

step "0. the machine"
{ nvidia-smi -L; nvidia-smi topo -m; env | grep -E '^(NCCL_|TORCH_SYMM|NVSHMEM)' | sort
  which mpirun; python3 -c 'import torch, cupy; from cupy.cuda import nccl
print("torch", torch.__version__, "cupy", cupy.__version__, "nccl", nccl.get_version())'
} >> "$LOG" 2>&1

step "1. multigpu under torchrun --standalone --nproc-per-node 2"
timeout 150 $TR --standalone --nproc-per-node 2 -m reducebench multigpu $CASES \
    --out "$OUT/multigpu_torchrun_$C.csv" >> "$LOG" 2>&1; ran $?

step "2. multigpu from one process driving both GPUs (no launcher), the same cases"
timeout 150 python3 -m reducebench multigpu --gpus 2 $CASES \
    --out "$OUT/multigpu_oneprocess_$C.csv" >> "$LOG" 2>&1; ran $?

step "3. two single-GPU nodes: two torchrun invocations, --nnodes 2, one GPU each"
NODE=(--nnodes 2 --nproc-per-node 1 --master-addr 127.0.0.1 --master-port 29611
      -m reducebench multigpu --size 2^24,2^30 --nccl --bytes 2^20,2^30
      --out "$OUT/multigpu_twonodes_$C.csv")
CUDA_VISIBLE_DEVICES=1 timeout 150 $TR --node-rank 1 "${NODE[@]}" > "$OUT/node1.tmp" 2>&1 &
CUDA_VISIBLE_DEVICES=0 timeout 150 $TR --node-rank 0 "${NODE[@]}" >> "$LOG" 2>&1; ran $?
wait $!; echo "node 1: exit $?" >> "$LOG"; cat "$OUT/node1.tmp" >> "$LOG"; rm -f "$OUT/node1.tmp"

step "4. the fleet check: run --device all under torchrun"
timeout 150 $TR --standalone --nproc-per-node 2 -m reducebench run --device all \
    --size 2^24,2^28 --rung vector_load,pingpong,cub \
    --out "$OUT/fleet_torchrun_$C.csv" >> "$LOG" 2>&1; ran $?

if command -v mpirun > /dev/null; then
    step "5. multigpu under mpirun -n 2"
    ROOT=$([ "$(id -u)" = 0 ] && echo --allow-run-as-root)
    timeout 120 mpirun -n 2 $ROOT -x PYTHONPATH python3 -m reducebench multigpu \
        --size 2^24 --nccl --bytes 2^20,2^30 --out "$OUT/multigpu_mpirun_$C.csv" \
        >> "$LOG" 2>&1; ran $?
else
    step "5. no mpirun on this machine: the mpirun path not run"
fi

step "6. GPU tests: tests/test_gpu_cluster.py"
timeout 400 python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/test_gpu_cluster.py \
    > "$OUT/pytest.tmp" 2>&1; ran $?
cat "$OUT/pytest.tmp" >> "$LOG"; tail -5 "$OUT/pytest.tmp"; rm -f "$OUT/pytest.tmp"
