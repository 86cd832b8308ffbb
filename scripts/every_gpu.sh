#!/usr/bin/env bash
# Issue 18, item 1, on a host with several GPUs: the GPU tests of `run --device all`, then
# the same test with the code broken on purpose (the children are not told their
# device, so every GPU's file would hold device 0's rows: it must fail), then
# `reducebench run --device all` at 2^24 and 2^28 float32 (auto, pingpong, CUB, torch),
# one CSV per GPU under $OUT.
source scripts/device_env.sh
GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
COUNT=$(nvidia-smi -L | wc -l)
SLUG=$(python3 -c "from reducebench.tuning import gpu_slug; print(gpu_slug('$GPU'))")x$COUNT
nvidia-smi -L | tee $OUT/every_gpu_devices.txt
echo "== tests"
timeout -s INT 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_every_device.py \
    2>&1 | tee $OUT/pytest_every_gpu.log | tail -3
echo "== the same, children not told their device (must fail)"
cp reducebench/every_device.py /tmp/every_device.bak
sed -i 's/"run", \*options, "--device", str(device),/"run", *options,/' reducebench/every_device.py
grep -c '"--device", str(device)' reducebench/every_device.py
timeout -s INT 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_every_device.py \
    -k own_file 2>&1 | tail -2
cp /tmp/every_device.bak reducebench/every_device.py
echo "== run --device all"
python3 -m reducebench run --device all --size 2^24,2^28 --rung auto,pingpong,cub,torch \
    --seed 18 --out $OUT/${SLUG}_every_gpu_${REDUCEBENCH_COMMIT:-local}.csv > $OUT/every_gpu_run.txt 2>&1
echo "exit $?"
sed -n '/the GPUs side by side/,$p' $OUT/every_gpu_run.txt | tail -40
