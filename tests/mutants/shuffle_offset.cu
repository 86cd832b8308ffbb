// Mutant (deliberately wrong): a wrong shuffle offset in the warp sum. Issue #12,
// required bug 6.
//
// Bug: the warp sum starts at offset warpSize (32) instead of warpSize / 2 (16). An
//   offset of 32 reaches no other lane of the warp, so __shfl_down_sync hands every lane
//   its own value back and the first step doubles every lane. Lane 0 ends with twice the
//   warp's sum; the second level (warp 0 summing the warp totals) doubles again, so a
//   block of 64 or more threads reports 4x its total.
// Correct: for (offset = warpSize / 2; offset > 0; offset /= 2), as in rb::warp_sum.
// Exposed by: every n, every dtype, any grid, whenever the sum S is not 0 (the harness's
//   exact inputs never sum to 0): atomic gives 4 S, relaunch 4^passes S. Both are exact
//   in float, and for int32 4^k S differs from S modulo 2^32 because 4^k - 1 is odd.
#include "finishes.cuh"

template <typename Acc>
__device__ Acc warp_sum_from_32(Acc v) {
    for (int offset = warpSize; offset > 0; offset /= 2)  // BUG: should start at warpSize / 2
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// Each warp sums itself; lane 0 of each warp leaves its total in shared memory; warp 0
// sums those. Valid in thread 0.
template <typename Acc, unsigned BLOCK>
__device__ Acc block_sum_from_32(Acc v) {
    constexpr unsigned kWarps = BLOCK / 32;
    v = warp_sum_from_32(v);
    if constexpr (kWarps > 1) {
        __shared__ Acc warp_totals[kWarps];
        const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        if (lane == 0) warp_totals[warp] = v;
        __syncthreads();
        if (warp == 0) v = warp_sum_from_32(lane < kWarps ? warp_totals[lane] : Acc(0));
    }
    return v;
}

// --finish atomic
template <typename T, typename Acc, unsigned BLOCK>
__global__ void shuffle_offset_atomic(const T* in, Acc* out, long long n) {
    const Acc total = block_sum_from_32<Acc, BLOCK>(mutant::thread_sum<T, Acc, BLOCK>(in, n));
    if (threadIdx.x == 0) atomicAdd(out, total);
}

// --finish relaunch: one partial per block, the same kernel run again on the partials.
template <typename T, typename Acc, unsigned BLOCK>
__global__ void shuffle_offset_relaunch(const T* in, Acc* out, long long n) {
    const Acc total = block_sum_from_32<Acc, BLOCK>(mutant::thread_sum<T, Acc, BLOCK>(in, n));
    if (threadIdx.x == 0) out[blockIdx.x] = total;
}
