// Rung shfl: warp shuffles instead of a shared-memory tree.
//
// Changed from the shared-memory rungs: inside a warp, lanes exchange registers with
// __shfl_down_sync (rb::warp_sum in common.cuh): 5 steps, no shared memory, no
// __syncthreads. Shared memory is used once, for the BLOCK/32 warp totals, which warp 0
// then reduces with shuffles again (rb::block_sum).
// Why faster: a shuffle is one instruction with no shared-memory round trip and no block
// barrier between steps; only one barrier remains per block.
// Preconditions: BLOCK is a multiple of 32, so every warp is full and the full-mask
// shuffles see 32 live lanes; threads past the end hold 0 instead of returning early
// (a lane that returned could not take part in the shuffle). One element per thread;
// the block partials are reduced by a re-launch. 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_shfl(const T* __restrict__ in, Acc* __restrict__ out, long long n) {
    const long long i = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    Acc v = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    v = rb::block_sum<Acc, BLOCK>(v);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
