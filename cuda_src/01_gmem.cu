// Rung gmem: the tree sum done in place in global memory.
//
// The starting point, with no earlier rung to change: each block owns BLOCK consecutive
// elements of a scratch copy of the input and halves them step by step where they lie:
// at each step the first `stride` threads add the element `stride` places further on
// into their own, and a __syncthreads() separates the steps. Thread 0 then writes the
// block's total to out[blockIdx.x], and the partials are reduced by a re-launch.
// Why it is slow: every step reads and writes global memory (through L1/L2), log2(BLOCK)
// round trips per block; the next rungs move the tree into shared memory.
// Preconditions: T == Acc (the tree writes sums back into the input, so the harness
// hands over a scratch copy it may overwrite); BLOCK a power of two (32..1024). The last
// block may own fewer than BLOCK elements: `count` bounds every read and write, so
// nothing at or past n is touched. 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_gmem(T* __restrict__ in, Acc* __restrict__ out, long long n) {
    static_assert(sizeof(T) == sizeof(Acc), "in place: the scratch holds accumulators");
    const unsigned tid = threadIdx.x;
    const long long base = static_cast<long long>(blockIdx.x) * BLOCK;
    T* data = in + base;
    // Elements this block owns: BLOCK, or fewer in the last block.
    const unsigned count = n - base < BLOCK ? static_cast<unsigned>(n - base) : BLOCK;
    // After the step of `stride`, data[t] (t < stride) holds the sum of every owned
    // element whose index is t modulo stride; slots at or past `count` are never read.
    for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (tid < stride && tid + stride < count) data[tid] += data[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = data[0];
}
