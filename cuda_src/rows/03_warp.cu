// Rung row_warp: a warp per row, several rows per block.
//
// Changed from row_group: a row is shared by a whole warp (32 lanes), a block of BLOCK
// threads holds BLOCK / 32 rows. Lane k adds the row's elements k, k + 32, k + 64, ...,
// then rb::warp_sum (five full-warp __shfl_down_sync steps) leaves the row's sum in lane
// 0, which writes it. Warps never wait for each other: no shared memory, no barrier.
// Why faster: each warp load reads 32 consecutive elements of one row (128 bytes of
// float: whole cache lines), and a row's loads are spread over 32 lanes, so rows of a few
// hundred to a few thousand elements stream at full width with a short chain per lane.
// Preconditions: BLOCK a multiple of 32. Warps of rows past the last one return as a
// whole warp (the row is the warp's), so the full-mask shuffles always see 32 live
// lanes. 64-bit indices.
#include "../common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_rows_warp(const T* __restrict__ in, Acc* __restrict__ out,
                                 long long rows, long long cols) {
    static_assert(BLOCK % rb::kWarpSize == 0, "BLOCK: a multiple of 32");
    constexpr unsigned kRowsPerBlock = BLOCK / rb::kWarpSize;
    const unsigned lane = threadIdx.x % rb::kWarpSize;
    const long long row = static_cast<long long>(blockIdx.x) * kRowsPerBlock +
                          threadIdx.x / rb::kWarpSize;
    if (row >= rows) return;  // the whole warp: every lane of a warp has the same row
    const T* p = in + row * cols;
    Acc sum = Acc(0);
    for (long long c = lane; c < cols; c += rb::kWarpSize) sum += rb::to_acc<Acc>(p[c]);
    sum = rb::warp_sum(sum);
    if (lane == 0) out[row] = sum;
}
