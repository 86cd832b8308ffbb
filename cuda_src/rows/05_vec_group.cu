// Rung row_vec_group: LANES lanes per row, 16-byte loads, LOADS of them in flight per lane.
//
// Changed from row_block: back to a group of lanes per row (as row_group, LANES from 1 to
// 32: a thread, a group or a warp a row, BLOCK / LANES rows a block), and each load now
// moves 16 bytes (float4, int4, double2, or 8 halves as a uint4) instead of one element:
// lane k of a group reads the row's vectors k, k + LANES, ..., issuing LOADS of them
// before it adds any (rb::row_share in row_vectors.cuh, which every later row rung reads
// its rows with). A row that does not start on a 16-byte boundary, or does not end on
// one (odd COLS, or COLS x sizeof(T) not a multiple of 16), has its head and tail read
// one element a lane. Then, as row_group, log2(LANES) width-limited shuffles, and the
// group's first lane writes the row's sum.
// Why faster: a quarter (an eighth for half types) of the load instructions and index
// arithmetic of the scalar rungs for the same bytes, and LOADS x 16 bytes asked for per
// lane before it waits. For narrow rows the group matches the row: with LANES = the
// row's vectors (1 for 4 floats, 2 for 8, 4 for 16), consecutive lanes read consecutive
// 16-byte chunks, so a warp's load is 512 contiguous bytes, where row_thread's 32 lanes
// each read one element COLS apart. LANES = 32 is a vectorised row_warp.
// Preconditions: LANES a power of two from 1 to 32 (a group never spans two warps),
// BLOCK a multiple of 32, LOADS >= 1; `in` aligned to sizeof(T) (any typed allocation
// is; 16-byte alignment is not required: the head covers the rest). Lanes of rows past
// the last one hold 0 and still take part in the shuffles (the full mask promises all 32
// lanes); only lanes of real rows read or write. 64-bit indices.
#include "../common.cuh"
#include "row_vectors.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LANES, unsigned LOADS>
__global__ void __launch_bounds__(BLOCK)
reduce_rows_vec_group(const T* __restrict__ in, Acc* __restrict__ out, long long rows,
                      long long cols) {
    static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0,
                  "LANES: a power of two from 1 to 32");
    static_assert(BLOCK % rb::kWarpSize == 0, "BLOCK: a multiple of 32");
    constexpr unsigned kRowsPerBlock = BLOCK / LANES;
    const unsigned lane = threadIdx.x % LANES;
    const long long row = static_cast<long long>(blockIdx.x) * kRowsPerBlock +
                          threadIdx.x / LANES;
    Acc sum = Acc(0);
    if (row < rows)
        sum = rb::row_share<T, Acc, LANES, LOADS>(in + row * cols, cols, lane, 0u, 1u);
#pragma unroll
    for (unsigned offset = LANES / 2; offset > 0; offset /= 2)
        sum += __shfl_down_sync(rb::kFullMask, sum, offset, LANES);
    if (lane == 0 && row < rows) out[row] = sum;
}
