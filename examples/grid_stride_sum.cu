// A worked example of a user kernel for `reducebench run --kernel` (docs/custom-kernels.md).
//
//   reducebench run --size 2^24 --rung cub \
//       --kernel examples/grid_stride_sum.cu:grid_stride_sum --finish atomic --grid per-sm=8
//
// What it does: a bounded grid (a few blocks per SM, chosen by --grid) walks the whole
// input with a grid-stride loop. Each thread issues LOADS independent loads before it
// adds any of them, so several memory requests are in flight per thread; then the block
// sums its threads with warp shuffles, and thread 0 adds the block's total to out[0] with
// one atomicAdd. The harness zeroes out[0] before every launch (--finish atomic).
//
// The contract it follows: a template over <T, Acc, BLOCK> (input type, accumulator type,
// threads per block), parameters (const T* in, Acc* out, long long n), any grid size, any
// n >= 1, 64-bit indices. Half types arrive as __half / __nv_bfloat16 and are converted
// to Acc (float) before any add; the harness includes cuda_fp16.h and cuda_bf16.h.
// Not deterministic for floats: the atomics add block totals in whatever order blocks end.

template <typename T, typename Acc, unsigned BLOCK>
__global__ void grid_stride_sum(const T* __restrict__ in, Acc* __restrict__ out,
                                long long n) {
    constexpr int LOADS = 8;
    const long long stride = static_cast<long long>(gridDim.x) * BLOCK;
    long long i = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;

    // LOADS coalesced loads per iteration, all issued before the first add.
    Acc sum = Acc(0);
    for (; i + (LOADS - 1) * stride < n; i += LOADS * stride) {
        T v[LOADS];
#pragma unroll
        for (int k = 0; k < LOADS; ++k) v[k] = in[i + k * stride];
#pragma unroll
        for (int k = 0; k < LOADS; ++k) sum += static_cast<Acc>(v[k]);
    }
    for (; i < n; i += stride) sum += static_cast<Acc>(in[i]);  // the last partial round

    // Warp sum with shuffles, then the BLOCK / 32 warp totals through shared memory.
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    __shared__ Acc warp_totals[BLOCK / 32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_totals[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        sum = lane < BLOCK / 32 ? warp_totals[lane] : Acc(0);
        for (int offset = 16; offset > 0; offset /= 2)
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        if (lane == 0) atomicAdd(out, sum);
    }
}
