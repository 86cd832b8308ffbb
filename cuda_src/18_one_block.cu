// Rung one_block: for small inputs, a single block reads every element and writes the
// result itself: one launch, no atomic, no zeroing, no second pass.
//
// Changed from pingpong: the grid is always exactly one block. It runs the same
// vectorised body (rb::vector_thread_sum with gridDim.x == 1: the block walks the whole
// input LOADS 16-byte loads per thread at a time, and handles the head and tail itself
// since it is block 0), then the same shuffle block sum, and thread 0 stores the total
// into out[0] with a plain store. Nothing is added into an accumulator, so nothing has
// to be zeroed before the launch or prepared for the next one.
// Why faster, for small n only: up to a few thousand elements a reduction is one launch
// and one DRAM round trip, and what the block does after its loads is the rest of the
// time. At 2^12 float32 pingpong also launches a single block (its grid is capped by the
// work), yet takes 4.90 us on the H100 against CUB's 4.16 us, and CUB's path at that size
// is exactly this one: one single-block launch that stores its result. This rung ends
// with the least a reduction can end with, one block sum and one store. Its time grows
// with n at the rate one multiprocessor can stream, so past some size (measured by
// `reducebench tune`) the many-block rungs win; the `auto` rung switches there.
// Preconditions: launched with exactly one block (more blocks would each store a partial
// sum into out[0]); BLOCK a multiple of 32 (full warps for the shuffles); `in` aligned to
// sizeof(T) (the head covers a start that is not 16-byte aligned); LOADS >= 1; any
// n >= 1, 64-bit indices. One block in a fixed order: deterministic.
#include "common.cuh"

// __launch_bounds__: every block size it accepts, up to 1024 threads, must launch with
// any LOADS (ptxas then keeps the registers within 64 per thread at 1024).
template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS>
__launch_bounds__(BLOCK) __global__ void reduce_one_block(const T* __restrict__ in,
                                                          Acc* __restrict__ out, long long n) {
    Acc sum = rb::vector_thread_sum<T, Acc, BLOCK, LOADS>(in, n);
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) out[0] = sum;
}
