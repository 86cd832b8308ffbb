// Rung row_group: a group of WIDTH lanes per row, summed with width-limited shuffles.
//
// Changed from row_thread: a row is shared by WIDTH consecutive lanes of a warp (WIDTH 2
// to 16), so a block holds BLOCK / WIDTH rows. Lane k of a group adds the row's elements
// k, k + WIDTH, k + 2*WIDTH, ..., then the group's WIDTH partial sums are added with
// __shfl_down_sync(mask, v, offset, WIDTH): the width argument splits the warp into
// 32 / WIDTH segments that shuffle independently, so log2(WIDTH) steps leave each row's
// sum in the group's first lane, which writes it.
// Why faster: the WIDTH lanes of a row read WIDTH consecutive elements at once, so a warp
// load covers 32 / WIDTH rows with whole segments instead of 32 scattered elements, and a
// row's chain of dependent adds is WIDTH times shorter. Rows of a few dozen elements keep
// every lane busy without wasting a whole warp on each.
// Preconditions: WIDTH a power of two from 2 to 16 (it divides 32, so no group spans two
// warps); BLOCK a multiple of 32. Lanes of rows past the last one hold 0 and still take
// part in the shuffles (the full mask promises all 32 lanes); only lanes of real rows
// read or write. 64-bit indices.
#include "../common.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned WIDTH>
__global__ void reduce_rows_group(const T* __restrict__ in, Acc* __restrict__ out,
                                  long long rows, long long cols) {
    static_assert(WIDTH >= 2 && WIDTH <= 16 && (WIDTH & (WIDTH - 1)) == 0,
                  "WIDTH: a power of two from 2 to 16");
    static_assert(BLOCK % rb::kWarpSize == 0, "BLOCK: a multiple of 32");
    constexpr unsigned kRowsPerBlock = BLOCK / WIDTH;
    const unsigned lane = threadIdx.x % WIDTH;
    const long long row = static_cast<long long>(blockIdx.x) * kRowsPerBlock + threadIdx.x / WIDTH;
    Acc sum = Acc(0);
    if (row < rows) {
        const T* p = in + row * cols;
        for (long long c = lane; c < cols; c += WIDTH) sum += rb::to_acc<Acc>(p[c]);
    }
#pragma unroll
    for (unsigned offset = WIDTH / 2; offset > 0; offset /= 2)
        sum += __shfl_down_sync(rb::kFullMask, sum, offset, WIDTH);
    if (lane == 0 && row < rows) out[row] = sum;
}
