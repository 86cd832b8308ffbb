// Rung shfl_xor: a butterfly with __shfl_xor_sync, after which every lane has the sum.
//
// Changed from shfl: the warp sum exchanges with __shfl_xor_sync(mask, v, m): lane l
// reads lane l ^ m, for m = 16, 8, 4, 2, 1. Both lanes of each pair add the other's
// value, so after 5 steps every lane holds the warp total (with __shfl_down_sync only
// lane 0 does, and the upper lanes read their own value once the source is past lane
// 31). The block sum is built the same way: each warp's lane 0 leaves the warp total in
// shared memory, and warp 0 butterflies over those.
// Why (about) as fast: the same 5 shuffles and adds per warp as shfl, so the cost is
// the same; what the butterfly buys is an all-reduce (every lane knows the total, e.g.
// to normalise its own element), and a sum in the same order on every lane.
// Preconditions: BLOCK a multiple of 32 (the full mask needs all 32 lanes live: threads
// past the end hold 0 instead of returning); one element per thread, the block
// partials are reduced by a re-launch; any n >= 1; 64-bit indices.
#include "common.cuh"

// Butterfly sum over a full warp: every lane returns the total of all 32 lanes.
template <typename Acc>
__device__ __forceinline__ Acc warp_sum_xor(Acc v) {
#pragma unroll
    for (unsigned mask = rb::kWarpSize / 2; mask > 0; mask /= 2)
        v += __shfl_xor_sync(rb::kFullMask, v, mask);
    return v;
}

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_shfl_xor(const T* __restrict__ in, Acc* __restrict__ out, long long n) {
    static_assert(BLOCK % rb::kWarpSize == 0 && BLOCK <= 1024, "BLOCK: a multiple of 32");
    constexpr unsigned kWarps = BLOCK / rb::kWarpSize;
    const long long i = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    Acc v = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    v = warp_sum_xor(v);
    if constexpr (kWarps > 1) {
        __shared__ Acc warp_totals[kWarps];
        const unsigned lane = threadIdx.x % rb::kWarpSize;
        const unsigned warp = threadIdx.x / rb::kWarpSize;
        if (lane == 0) warp_totals[warp] = v;
        __syncthreads();
        // Warp 0 reads only the kWarps slots that were written; its other lanes add 0.
        if (warp == 0) v = warp_sum_xor(lane < kWarps ? warp_totals[lane] : Acc(0));
    }
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
