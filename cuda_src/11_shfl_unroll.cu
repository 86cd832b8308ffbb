// Rung shfl_unroll: several elements per thread loaded first, then the shuffle sum.
//
// Changed from shfl: a block owns UNROLL * BLOCK consecutive elements. Each thread
// loads UNROLL of them, BLOCK apart (so each load instruction of a warp reads 32
// consecutive elements: coalesced), into registers, and only then adds them; the block
// then sums with shuffles (rb::block_sum) as in shfl.
// Why faster: the UNROLL loads are independent and all issued before the first add, so
// their memory latencies overlap instead of adding up; the grid is UNROLL times smaller,
// so the block sum and the partial write are paid once per UNROLL * BLOCK elements.
// Preconditions: BLOCK a multiple of 32 (full warps for the full-mask shuffles);
// UNROLL >= 1; ceil(n / (UNROLL * BLOCK)) blocks, the block partials are reduced by a
// re-launch. Each load is checked against n on its own and threads past the end hold 0
// rather than returning, so any n >= 1 works; 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned UNROLL>
__global__ void reduce_shfl_unroll(const T* __restrict__ in, Acc* __restrict__ out,
                                   long long n) {
    static_assert(UNROLL >= 1, "UNROLL: at least one element per thread");
    const long long base = static_cast<long long>(blockIdx.x) * (UNROLL * BLOCK) + threadIdx.x;
    Acc loaded[UNROLL];
#pragma unroll
    for (unsigned k = 0; k < UNROLL; ++k) {
        const long long i = base + static_cast<long long>(k) * BLOCK;
        loaded[k] = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    }
    Acc v = Acc(0);
#pragma unroll
    for (unsigned k = 0; k < UNROLL; ++k) v += loaded[k];
    v = rb::block_sum<Acc, BLOCK>(v);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
