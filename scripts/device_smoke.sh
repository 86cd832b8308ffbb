#!/usr/bin/env bash
# First contact with the GPU: info, the foundation rungs' correctness, one run.
source scripts/device_env.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
python3 -c "import cupy; print('cupy', cupy.__version__, 'bf16', hasattr(cupy, 'bfloat16'))"
python3 -m reducebench info 2>&1 | tee "$OUT/info.txt"
python3 -m pytest -m gpu -q -x tests/test_gpu_correctness.py \
    -k "smem_sequential or shfl- or gridstride_atomic or cub or cupy or torch" 2>&1 \
    | tee "$OUT/pytest_gpu.log" | tail -30
python3 -m reducebench run --size 2^24 --rung smem_sequential,shfl,gridstride_atomic,cub,cupy,torch \
    --out "$OUT/smoke_f32.csv" 2>&1 | tee "$OUT/run.txt"
