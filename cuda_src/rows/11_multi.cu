// Rung row_multi: LANES lanes a row, GROUP_ROWS rows a group, every load of those rows in
// flight at once.
//
// Changed from row_tile: back to row_vec_group's groups of LANES lanes reading rows
// straight from global memory into registers (no shared memory, no barrier), but a group
// now owns GROUP_ROWS rows instead of one, and issues the loads of all of them before it
// adds any. The block's rows are laid out so that each round of loads is one contiguous
// span: group g of the block (G = BLOCK / LANES groups) owns rows g, g + G, ...,
// g + (GROUP_ROWS - 1) x G of the block's G x GROUP_ROWS consecutive rows, so in round r
// the block's groups read rows r x G .. r x G + G - 1, side by side. In a row, lane l reads
// vectors l, l + LANES, ..., LOADS of them; a row of more than LANES x LOADS vectors has
// the rest added after (rb::row_share, LOADS at a time). Then each row is summed across
// its group with log2(LANES) width-limited shuffles and the group's first lane writes it.
// With L2_PREFETCH every load asks L2 for the surrounding 256 bytes (rb::load16).
// Why faster: for narrow rows row_vec_group has nothing more to ask for once a lane has
// loaded its row's one or two vectors: LANES = the row's vectors gives each lane one load
// in flight and a block of 256 threads 4 KB, and the many small blocks spend their time
// starting and ending. Here a lane has GROUP_ROWS x LOADS loads in flight, and with LANES
// x LOADS = the row's vectors each round of a block's loads covers BLOCK consecutive
// 16-byte vectors, the pattern of the 1-D one-shot read (ceiling.cu's read_one_shot), so a
// block reads GROUP_ROWS x 4 KB (block 256, float32) in one go, whatever the row's width.
// Rows whose start is not on a 16-byte boundary (COLS x sizeof(T) not a multiple of 16, or
// an unaligned array) take row_vec_group's path, one row after another (rb::row_share,
// heads and tails one element a lane): correct, not faster; row_tile is the rung for them.
// Preconditions: LANES a power of two from 1 to 32 (a group never spans two warps), BLOCK
// a multiple of 32, GROUP_ROWS >= 1, LOADS >= 1; `in` aligned to sizeof(T); the grid is
// ceil(ROWS / (BLOCK / LANES x GROUP_ROWS)) (ladder/geometry.py plan_rows). Lanes of rows
// past the last one hold 0 and still take part in the shuffles. 64-bit indices.
#include "../common.cuh"
#include "row_vectors.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LANES, unsigned GROUP_ROWS,
          unsigned LOADS, unsigned L2_PREFETCH>
__global__ void __launch_bounds__(BLOCK)
reduce_rows_multi(const T* __restrict__ in, Acc* __restrict__ out, long long rows,
                  long long cols) {
    static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0,
                  "LANES: a power of two from 1 to 32");
    static_assert(BLOCK % rb::kWarpSize == 0 && GROUP_ROWS >= 1 && LOADS >= 1, "");
    using V = rb::Vec16<T>;
    using Vec = typename V::type;
    constexpr unsigned kGroups = BLOCK / LANES;
    constexpr long long kFirstVectors = static_cast<long long>(LANES) * LOADS;
    const unsigned lane = threadIdx.x % LANES;
    const long long first = static_cast<long long>(blockIdx.x) * kGroups * GROUP_ROWS +
                            threadIdx.x / LANES;  // this group's row in round 0

    const bool aligned = (reinterpret_cast<unsigned long long>(in) & 15u) == 0 &&
                         (cols * static_cast<long long>(sizeof(T))) % 16 == 0;
    if (!aligned) {  // rows of any alignment: row_vec_group's reading, one row at a time
#pragma unroll 1
        for (unsigned g = 0; g < GROUP_ROWS; ++g) {  // the same for the whole grid
            const long long row = first + static_cast<long long>(g) * kGroups;
            Acc sum = row < rows ? rb::row_share<T, Acc, LANES, LOADS, L2_PREFETCH != 0>(in + row * cols, cols,
                                                                       lane, 0u, 1u)
                                 : Acc(0);
#pragma unroll
            for (unsigned offset = LANES / 2; offset > 0; offset /= 2)
                sum += __shfl_down_sync(rb::kFullMask, sum, offset, LANES);
            if (lane == 0 && row < rows) out[row] = sum;
        }
        return;
    }

    // Every row starts on a 16-byte boundary: whole vectors only.
    const long long vectors = cols / V::kWidth;
    const Vec* vin = reinterpret_cast<const Vec*>(in);
    Vec r[GROUP_ROWS][LOADS];
#pragma unroll
    for (unsigned g = 0; g < GROUP_ROWS; ++g) {  // every load issued before any add
        const long long row = first + static_cast<long long>(g) * kGroups;
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) {
            const long long v = lane + static_cast<long long>(k) * LANES;
            r[g][k] = Vec{};  // zero bits: a zero of every element type
            if (row < rows && v < vectors)
                r[g][k] = rb::load16<L2_PREFETCH != 0>(vin + row * vectors + v);
        }
    }
#pragma unroll
    for (unsigned g = 0; g < GROUP_ROWS; ++g) {
        const long long row = first + static_cast<long long>(g) * kGroups;
        Acc sum = Acc(0);
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) sum += static_cast<Acc>(V::sum(r[g][k]));
        if (vectors > kFirstVectors && row < rows)  // a row wider than one round: the rest
            sum += rb::row_share<T, Acc, LANES, LOADS, L2_PREFETCH != 0>(in + (row * vectors + kFirstVectors) *
                                                           V::kWidth,
                                                       (vectors - kFirstVectors) * V::kWidth,
                                                       lane, 0u, 1u);
#pragma unroll
        for (unsigned offset = LANES / 2; offset > 0; offset /= 2)
            sum += __shfl_down_sync(rb::kFullMask, sum, offset, LANES);
        if (lane == 0 && row < rows) out[row] = sum;
    }
}
