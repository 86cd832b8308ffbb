// Rung warp_atomic: each warp sums with shuffles and adds its total with one atomicAdd.
//
// Changed from shfl: no shared memory, no __syncthreads() and no second launch. After
// rb::warp_sum, lane 0 of every warp atomically adds the warp's total to out[0], which
// the harness zeroes before the launch.
// Why it can be faster, and why it often is not: the block-level step and the re-launch
// over partials are gone, but every warp now issues an atomic on the same address, n/32
// of them. The L2 serialises atomics to one address, so for large n the atomics, not
// the loads, set the pace; the next rungs cut them to one per block.
// Preconditions: BLOCK a multiple of 32 (full warps for the full-mask shuffles; threads
// past the end hold 0 instead of returning); out[0] zeroed before the launch. Float
// atomics make the result depend on the order warps finish in: not deterministic.
// One element per thread; 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_warp_atomic(const T* __restrict__ in, Acc* __restrict__ out,
                                   long long n) {
    static_assert(BLOCK % rb::kWarpSize == 0, "BLOCK: a multiple of 32");
    const long long i = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    Acc v = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    v = rb::warp_sum(v);
    if (threadIdx.x % rb::kWarpSize == 0) atomicAdd(out, v);
}
