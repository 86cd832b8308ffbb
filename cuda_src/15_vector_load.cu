// Rung vector_load: 16-byte loads, LOADS of them in flight per thread, one atomic per block.
//
// Changed from gridstride_atomic: each load instruction now moves 16 bytes per thread
// (float4, int4, double2, or 8 halves as a uint4) instead of one element, and each
// iteration of the grid-stride loop issues LOADS independent vector loads before adding
// any of them (rb::vector_thread_sum in common.cuh, shared with single_pass). Elements
// before the first 16-byte boundary (head) and after the last whole vector (tail) are
// read one by one by block 0. Then, as before, a shuffle block sum and one atomicAdd.
// Why faster: a quarter (or an eighth for half types) of the load instructions and of
// the index arithmetic for the same bytes, and LOADS * 16 bytes requested per thread
// before it waits, so with a few blocks per multiprocessor enough bytes are in flight to
// cover DRAM latency and run at full bandwidth. Half types are converted to float before
// any add, never summed in half.
// Preconditions: BLOCK a multiple of 32 (full warps for the shuffles); `in` aligned to
// sizeof(T) (16-byte alignment is not required: the head covers the rest); LOADS >= 1;
// out[0] zeroed before the launch. Any grid size and any n >= 1; 64-bit indices. Float
// atomics make the result depend on the order blocks finish in: not deterministic.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, unsigned L2_PREFETCH>
__global__ void reduce_vector_load(const T* __restrict__ in, Acc* __restrict__ out,
                                   long long n) {
    Acc sum = rb::vector_thread_sum<T, Acc, BLOCK, LOADS, L2_PREFETCH != 0>(in, n);
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) atomicAdd(out, sum);
}
