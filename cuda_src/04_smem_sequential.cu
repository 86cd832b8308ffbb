// Rung smem_sequential: shared-memory tree with sequential addressing.
//
// Changed from smem_strided: at each step the active threads are the first `stride`
// ones and thread t adds partial[t + stride] into partial[t]. The active threads are
// contiguous, so whole warps retire together (no divergence inside a warp), and
// consecutive threads touch consecutive words, so there are no bank conflicts.
// Why faster: the same number of adds as before, but no warp serialises on a branch or
// on a shared-memory bank.
// Preconditions: BLOCK is a power of two (32..1024); one element per thread, so the
// grid has ceil(n / BLOCK) blocks and the block partials are reduced by a re-launch.
// Threads past the end contribute 0, so any n >= 1 works; indices are 64-bit.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_smem_sequential(const T* __restrict__ in, Acc* __restrict__ out,
                                       long long n) {
    __shared__ Acc partial[BLOCK];
    const unsigned tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * BLOCK + tid;
    partial[tid] = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (tid < stride) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}
