// Rung row_vec_block: a block per row, 16-byte loads, LOADS of them in flight per thread.
//
// Changed from row_vec_group: a row is shared by the whole block again (grid = ROWS), as
// in row_block, and read as row_vec_group reads it: thread t loads the row's vectors t,
// t + BLOCK, ..., LOADS of them issued before the first add (rb::block_row_share: a row
// on 16-byte boundaries at both ends by one loop of whole vectors that is the kernel's
// first code, any other by rb::row_share with LANES = BLOCK, out of line, the head and
// tail of such a row one element a thread). Then row_block's block sum: each warp's
// shuffles, the warp totals through shared memory, warp 0. With EVICT_FIRST the loads
// carry the evict-first (streaming) hint (rb::load16).
// Why faster: row_block for wide rows with a quarter (an eighth for half types) of its
// load instructions, and LOADS x 16 bytes requested per thread before it waits instead of
// one element: a block keeps BLOCK x LOADS x 16 bytes of its row in flight, enough for
// rows of thousands of elements to stream at full width while the grid has a block per
// row.
// Preconditions: BLOCK a multiple of 32, at most 1024; LOADS >= 1; `in` aligned to
// sizeof(T); ROWS at most 2^31 - 1 (one block per row in a 1-D grid). Every thread of a
// block reaches the barrier: a block past the last row (none in the planned grid) returns
// as a whole, before it. 64-bit indices.
#include "../common.cuh"
#include "row_vectors.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, unsigned EVICT_FIRST>
__global__ void __launch_bounds__(BLOCK)
reduce_rows_vec_block(const T* __restrict__ in, Acc* __restrict__ out, long long rows,
                      long long cols) {
    const long long row = blockIdx.x;
    if (row >= rows) return;  // the whole block: no thread is left at the barrier
    Acc sum = rb::block_row_share<T, Acc, BLOCK, LOADS, false, EVICT_FIRST != 0>(
        in + row * cols, cols, threadIdx.x, 0u, 1u);
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) out[row] = sum;
}
