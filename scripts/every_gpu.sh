#!/usr/bin/env bash
# `run --device all` on a host with several GPUs: its GPU tests, then the run itself at
# 2^24 and 2^28 float32 (auto, pingpong, CUB, torch), one CSV per GPU under
# $OUT/<gpu>x<count>/ (scripts/lib.sh), and the GPUs side by side. About 3 minutes.
# (A child that is not told its device is caught on the CPU by
# tests/test_every_device.py, which checks the children's command lines.)
source scripts/lib.sh
S=$OUT/${SLUG}x$GPU_COUNT; mkdir -p $S
nvidia-smi -L | tee $L/every_gpu_devices_${SLUG}x${GPU_COUNT}_$COMMIT.txt
echo "== tests"
timeout -s INT 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_every_device.py \
    2>&1 | tee $L/pytest_every_gpu_${SLUG}x${GPU_COUNT}_$COMMIT.log | tail -3
echo "== run --device all"
$RB run --device all --size 2^24,2^28 --rung auto,pingpong,cub,torch --seed 18 \
    --out $S/every_gpu_$COMMIT.csv > $L/every_gpu_run_${SLUG}x${GPU_COUNT}_$COMMIT.txt 2>&1
echo "exit $?"
sed -n '/the GPUs side by side/,$p' $L/every_gpu_run_${SLUG}x${GPU_COUNT}_$COMMIT.txt | tail -40
