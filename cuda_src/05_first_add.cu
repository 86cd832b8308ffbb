// Rung first_add: the first add of the tree done while loading from global memory.
//
// Changed from smem_sequential: a block now owns 2*BLOCK elements, so the grid has half
// as many blocks. Thread t loads element t of the first half and element t of the second
// half of the block's span, adds them in registers, and stores the one sum in shared
// memory; the shared-memory tree then runs as before.
// Why faster: in the previous rungs half the threads went idle after the first tree
// step; here every thread does useful work (two loads and an add) before the tree, and
// the per-block costs (start-up, tree, the partial write) are paid once per 2*BLOCK
// elements instead of once per BLOCK.
// Preconditions: BLOCK a power of two (32..1024); the grid has ceil(n / (2*BLOCK))
// blocks, the block partials are reduced by a re-launch. Each of the two loads is
// checked against n on its own (the second half of the last block may be partly or
// wholly past the end), so any n >= 1 works; 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_first_add(const T* __restrict__ in, Acc* __restrict__ out,
                                 long long n) {
    __shared__ Acc partial[BLOCK];
    const unsigned tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * (2 * BLOCK) + tid;
    Acc v = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    if (i + BLOCK < n) v += rb::to_acc<Acc>(in[i + BLOCK]);
    partial[tid] = v;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}
