#!/usr/bin/env bash
# Issue 18's sweeps, on one host with 2 GPUs (or more): the multi-GPU GPU tests, the
# sharded sum of 2^24..2^33 float32 on 1 and 2 GPUs, and NCCL's all-reduce and reduce of
# 2^10..2^30 bytes, into CSVs under $OUT, then a short table. About 8 minutes at most:
# every step has its own time limit, and a step stopped by it (SIGINT) keeps the rows it
# wrote. GPUS=1,2,4 measures 4 GPUs too (longer).
#
# The environment is passed through as it is: nothing here sets or unsets an NCCL_*
# variable (the host's NCCL_NVLS_ENABLE=0 stays in force); they are only recorded.
source scripts/device_env.sh
GPUS=${GPUS:-1,2}
M="python3 -m reducebench multigpu"
stage() { echo "== $1 ($(date +%T))"; }

stage "devices"
{ nvidia-smi -L; nvidia-smi topo -m; } > $OUT/multigpu_topology.txt 2>&1
env | grep '^NCCL_' | sort > $OUT/multigpu_nccl_env.txt
head -4 $OUT/multigpu_topology.txt
echo "NCCL_* as found: $(tr '\n' ' ' < $OUT/multigpu_nccl_env.txt)"

stage "gpu tests"
timeout -s INT -k 15 120 python3 -m pytest -m gpu -q -p no:cacheprovider \
    tests/test_gpu_multigpu.py 2>&1 | tee $OUT/pytest_multigpu.log | tail -3

stage "sharded sum, 2^24..2^33 float32, gpus $GPUS"
timeout -s INT -k 15 220 $M --size 2^24..2^33 --dtype float32 --gpus $GPUS --seed 18 \
    --max-time 0.3 --out $OUT/multigpu_sharded_f32.csv > $OUT/multigpu_sharded.txt 2>&1
echo "exit $?"; tail -2 $OUT/multigpu_sharded.txt

stage "NCCL all-reduce and reduce, 2^10..2^30 bytes float32, gpus $GPUS"
timeout -s INT -k 15 90 $M --no-sharded --nccl --bytes 2^10..2^30 --dtype float32 \
    --gpus $GPUS --seed 18 --max-time 0.2 --out $OUT/multigpu_nccl_f32.csv \
    > $OUT/multigpu_nccl.txt 2>&1
echo "exit $?"; tail -2 $OUT/multigpu_nccl.txt

stage "summary"
python3 scripts/multigpu_summary.py $OUT/multigpu_sharded_f32.csv $OUT/multigpu_nccl_f32.csv \
    2>&1 | tee $OUT/multigpu_summary.txt
