// Rung row_thread: one thread per row, a sequential loop over the row.
//
// Changed from the 1-D ladder: the input is a row-major ROWS x COLS array and the result
// is one value per row (out[r], the sum of row r), not one value in all. Each thread owns
// a whole row and adds its COLS elements in order in a register; no partial sum is ever
// combined with another thread's, so there is no shuffle, no shared memory, no barrier
// and no second launch.
// Why faster: it is the baseline of the row ladder, the one that wins for very narrow rows
// (a few columns), where any cooperation costs more than it shares: every thread of the
// grid has a row of work and the whole reduction is one pass of loads and adds.
// Preconditions: ROWS >= 1 and COLS >= 1, ROWS x COLS elements at `in`, ROWS values at
// `out`; one thread per row (grid = ceil(ROWS / BLOCK)), threads past the last row
// return. A warp's 32 loads lie COLS elements apart, so they coalesce only for narrow
// rows. 64-bit indices.
#include "../common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_rows_thread(const T* __restrict__ in, Acc* __restrict__ out,
                                   long long rows, long long cols) {
    const long long row = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
    if (row >= rows) return;
    const T* p = in + row * cols;
    Acc sum = Acc(0);
    for (long long c = 0; c < cols; ++c) sum += rb::to_acc<Acc>(p[c]);
    out[row] = sum;
}
