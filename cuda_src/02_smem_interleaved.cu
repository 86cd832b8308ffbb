// Rung smem_interleaved: the tree moved into shared memory, interleaved addressing.
//
// Changed from gmem: each thread first copies its element into a shared-memory array
// (0 past the end of the input), and the tree runs there instead of in global memory.
// At the step of `stride` (1, 2, 4, ...) thread t works only if t is a multiple of
// 2*stride, adding partial[t + stride] into partial[t].
// Why faster: the input is read from global memory once; the log2(BLOCK) tree steps hit
// on-chip shared memory, and the input no longer needs to be a scratch copy.
// Still slow: `tid % (2*stride) == 0` picks scattered threads, so every warp stays busy
// with a few active lanes (divergence), and % is a costly instruction.
// Preconditions: BLOCK a power of two (32..1024); one element per thread, the block
// partials are reduced by a re-launch. Every slot is written before the tree starts, so
// any n >= 1 works; indices are 64-bit.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_smem_interleaved(const T* __restrict__ in, Acc* __restrict__ out,
                                        long long n) {
    __shared__ Acc partial[BLOCK];
    const unsigned tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * BLOCK + tid;
    partial[tid] = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    __syncthreads();
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        if (tid % (2 * stride) == 0) partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = partial[0];
}
