// Rung smem_strided: interleaved addressing with a strided index, no divergent branch.
//
// Changed from smem_interleaved: the same pairs are added, but thread t now handles the
// pair at index = 2 * stride * t, so the working threads are the first BLOCK/(2*stride)
// ones instead of every (2*stride)-th one.
// Why faster: whole warps either work or skip the step together, so no warp carries idle
// lanes through the add, and the modulo is gone.
// New cost: consecutive threads touch words 2*stride apart, so several threads of a warp
// hit the same shared-memory bank (a 2-way conflict at stride 1, worse as stride grows)
// and their accesses are serialised; the next rung removes that.
// Preconditions: BLOCK a power of two (32..1024); one element per thread, the block
// partials are reduced by a re-launch; any n >= 1; 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_smem_strided(const T* __restrict__ in, Acc* __restrict__ out,
                                    long long n) {
    __shared__ Acc partial[BLOCK];
    const unsigned tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * BLOCK + tid;
    partial[tid] = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    __syncthreads();
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        const unsigned index = 2 * stride * tid;
        if (index < BLOCK) partial[index] += partial[index + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}
