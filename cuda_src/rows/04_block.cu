// Rung row_block: a block per row, its warps' sums added through shared memory.
//
// Changed from row_warp: a row is shared by a whole block of BLOCK threads (grid = ROWS).
// Thread t adds the row's elements t, t + BLOCK, t + 2*BLOCK, ...; then rb::block_sum, as
// PyTorch's BlockReduceSum: each warp sums with shuffles, lane 0 of each warp leaves its
// total in shared memory, a barrier, and warp 0 sums the BLOCK / 32 totals. Thread 0
// writes the row's sum.
// Why faster: for wide rows (thousands of elements and more) one warp per row leaves too
// few loads in flight per row and too long a chain per lane; BLOCK threads read a row
// BLOCK elements at a time, and the one barrier per row is paid once per BLOCK x chain
// elements.
// Preconditions: BLOCK a multiple of 32, at most 1024; ROWS at most 2^31 - 1 (one block
// per row in a 1-D grid). Every thread of a block reaches the barrier: a block past the
// last row (none in the planned grid) returns as a whole, before it. 64-bit indices.
#include "../common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_rows_block(const T* __restrict__ in, Acc* __restrict__ out,
                                  long long rows, long long cols) {
    const long long row = blockIdx.x;
    if (row >= rows) return;  // the whole block: no thread is left at the barrier
    const T* p = in + row * cols;
    Acc sum = Acc(0);
    for (long long c = threadIdx.x; c < cols; c += BLOCK) sum += rb::to_acc<Acc>(p[c]);
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) out[row] = sum;
}
