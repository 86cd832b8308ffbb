// Shared by every rung: reading an input element into the accumulator type, and the
// warp and block sums that the shuffle rungs build on. Kept small on purpose: each rung
// file shows its own idea in full and takes only these plumbing pieces from here.
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace rb {

enum : unsigned { kWarpSize = 32u, kFullMask = 0xffffffffu };

// Half types are read as half but summed in float: 2^24 halves summed in half precision
// stop growing at 2048, where adding 1 no longer changes the sum.
template <typename Acc, typename T>
__device__ __forceinline__ Acc to_acc(T x) { return static_cast<Acc>(x); }
template <>
__device__ __forceinline__ float to_acc<float, __half>(__half x) { return __half2float(x); }
template <>
__device__ __forceinline__ float to_acc<float, __nv_bfloat16>(__nv_bfloat16 x) {
    return __bfloat162float(x);
}

// Tree sum of a full warp with __shfl_down_sync: after 5 steps lane 0 holds the sum of
// all 32 lanes (the other lanes hold partial sums). Every lane of the warp must call it:
// the full mask promises that all 32 lanes take part.
template <typename Acc>
__device__ __forceinline__ Acc warp_sum(Acc v) {
#pragma unroll
    for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// Sum over a block of BLOCK threads (a multiple of 32): each warp reduces with shuffles,
// lane 0 of each warp leaves its total in shared memory, and warp 0 reduces those. The
// result is valid in thread 0 only. Warp 0 reads only the BLOCK/32 slots that warps
// wrote, never an unwritten one. Call it from every thread of the block, and put a
// __syncthreads() between two calls in one kernel (they share warp_totals).
template <typename Acc, unsigned BLOCK>
__device__ __forceinline__ Acc block_sum(Acc v) {
    static_assert(BLOCK % kWarpSize == 0 && BLOCK <= 1024, "BLOCK: a multiple of 32, <= 1024");
    constexpr unsigned kWarps = BLOCK / kWarpSize;
    v = warp_sum(v);
    if constexpr (kWarps > 1) {
        __shared__ Acc warp_totals[kWarps];
        const unsigned lane = threadIdx.x % kWarpSize;
        const unsigned warp = threadIdx.x / kWarpSize;
        if (lane == 0) warp_totals[warp] = v;
        __syncthreads();
        if (warp == 0) v = warp_sum(lane < kWarps ? warp_totals[lane] : Acc(0));
    }
    return v;
}

}  // namespace rb
