// Rung row_two_pass: several blocks per row write partials; a second launch sums them.
//
// Changed from row_split: no atomic and no zeroing. Block b still sums part b % splits
// of row b / splits (rb::row_share for every row, where row_split reads rows on 16-byte
// boundaries with rb::block_row_share's plain loop; row_block's block sum), but writes
// it to out[row x splits + part], a workspace of ROWS x splits partials. A second launch
// of the same kernel, instantiated for the accumulator type, reads the workspace as ROWS
// rows of `splits` values with one block a row (splits = 1) and writes each row's sum.
// Where the planner gives one block a row (splits = 1: the rows alone fill the GPU) the
// first launch writes the sums and there is no second.
// Why faster: than a block per row, for few long rows, as row_split is (the whole GPU
// reads every row); against row_split it gives up the atomics and the zeroing for a
// second launch, which reads ROWS x splits accumulators (a few thousand: the grid of the
// first), and gets the same bits on every run: each partial depends only on the grid,
// and the second launch adds a row's partials in a fixed order.
// Preconditions: BLOCK a multiple of 32, at most 1024; LOADS >= 1; `in` aligned to
// sizeof(T); `out` holds ROWS x splits values; ROWS x splits at most 2^31 - 1 (the grid
// is exactly that: a block past the last row returns as a whole, before its barrier).
// 64-bit indices.
#include "../common.cuh"
#include "row_vectors.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS>
__global__ void __launch_bounds__(BLOCK)
reduce_rows_two_pass(const T* __restrict__ in, Acc* __restrict__ out, long long rows,
                     long long cols, long long splits) {
    const long long row = blockIdx.x / splits;
    const unsigned part = static_cast<unsigned>(blockIdx.x % splits);
    if (row >= rows) return;  // the whole block: no thread is left at the barrier
    Acc sum = rb::row_share<T, Acc, BLOCK, LOADS>(in + row * cols, cols, threadIdx.x, part,
                                                  static_cast<unsigned>(splits));
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) out[row * splits + part] = sum;
}
