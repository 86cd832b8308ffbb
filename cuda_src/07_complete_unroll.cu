// Rung complete_unroll: every tree step chosen at compile time from the block size.
//
// Changed from unroll_last_warp: BLOCK, a template parameter from the start, now drives
// the whole tree: each block-wide step is an `if constexpr (BLOCK >= ...)`, so the
// compiler emits exactly the steps this block size needs, with no loop counter, no
// loop-exit branch and constant offsets; the warp steps are a fully unrolled loop.
// Why faster: the loop overhead (counter, compare, branch, computed addresses) is gone;
// what remains per step is the bound test on tid, one shared-memory read and add, and
// the barrier.
// The last warp works as in unroll_last_warp: read, __syncwarp(), write, __syncwarp(),
// which is safe without lockstep execution (Volta and later). Every step keeps the
// running sum in a register, so a thread reads only its neighbour's slot.
// Preconditions: BLOCK a power of two from 64 to 1024; 2*BLOCK elements per block, the
// block partials are reduced by a re-launch; any n >= 1; 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_complete_unroll(const T* __restrict__ in, Acc* __restrict__ out,
                                       long long n) {
    static_assert(BLOCK >= 64 && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0,
                  "BLOCK: a power of two from 64 to 1024");
    __shared__ Acc partial[BLOCK];
    const unsigned tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * (2 * BLOCK) + tid;
    Acc v = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    if (i + BLOCK < n) v += rb::to_acc<Acc>(in[i + BLOCK]);
    partial[tid] = v;
    __syncthreads();
    if constexpr (BLOCK >= 1024) {
        if (tid < 512) partial[tid] = v = v + partial[tid + 512];
        __syncthreads();
    }
    if constexpr (BLOCK >= 512) {
        if (tid < 256) partial[tid] = v = v + partial[tid + 256];
        __syncthreads();
    }
    if constexpr (BLOCK >= 256) {
        if (tid < 128) partial[tid] = v = v + partial[tid + 128];
        __syncthreads();
    }
    if constexpr (BLOCK >= 128) {
        if (tid < 64) partial[tid] = v = v + partial[tid + 64];
        __syncthreads();
    }
    if (tid < 32) {
#pragma unroll
        for (unsigned offset = 32; offset > 0; offset /= 2) {
            v += partial[tid + offset];
            __syncwarp();
            partial[tid] = v;
            __syncwarp();
        }
        if (tid == 0) out[blockIdx.x] = v;
    }
}
