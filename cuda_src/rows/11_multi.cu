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
// vectors l, l + LANES, ..., LOADS of them. Then each row is summed across its group with
// log2(LANES) width-limited shuffles and the group's first lane writes it. With
// L2_PREFETCH every load asks L2 for the surrounding 256 bytes (rb::load16); with
// EVICT_FIRST every load carries the evict-first (streaming) hint, as the same-shape
// read's fastest kernel on the H200 at narrow rows does (its one-shot 1024x4
// evict-first, which reads 4194304 x 16 float32 in 62.26 us where the same read without
// the hint takes 67.42; results/logs/probe_reads_h200_8b95846.txt). With it the H200
// reads 2097152 x 32 float32 in 61.92 us, 100.3% of the same-shape read, against 66.26
// us and 92.5% without (results/h200/rows_multi_evict_682bb1e.csv,
// results/h200/rows_multi_narrow_b88697d.csv).
// Why faster: for narrow rows row_vec_group has nothing more to ask for once a lane has
// loaded its row's one or two vectors: LANES = the row's vectors gives each lane one load
// in flight and a block of 256 threads 4 KB, and the many small blocks spend their time
// starting and ending. Here a lane has GROUP_ROWS x LOADS loads in flight, and where a
// row is exactly LANES x LOADS vectors each round of a block's loads covers BLOCK x LOADS
// consecutive 16-byte vectors, the pattern of the 1-D one-shot read (ceiling.cu's
// read_one_shot), so a block reads GROUP_ROWS x LOADS x 4 KB (block 256) in one go. That
// is the fast path: every load a constant distance from one pointer, no bound check and
// no row arithmetic a load, so the kernel's registers are little more than the loads'
// own (with a bound check and a 64-bit row offset a load, all rows' loads at once,
// GROUP_ROWS = 8 took 80 registers). Every other case (a row of another width, a block
// holding the last rows, a row not on a 16-byte boundary) reads a group's rows one after
// another as row_vec_group does (rb::row_share), except that with one row a group a row
// on the boundaries is one round of LANES x LOADS bound-checked vector loads and any rest
// after (a warp a row, 8 loads, for rows of 256 to 1024 floats: row_share's set loop
// took up to 18% longer on the H200). Rows off the boundaries: correct, not faster;
// row_tile is the rung for those.
// Preconditions: LANES a power of two from 1 to 32 (a group never spans two warps), BLOCK
// a multiple of 32, GROUP_ROWS >= 1, LOADS >= 1; `in` aligned to sizeof(T); the grid is
// ceil(ROWS / (BLOCK / LANES x GROUP_ROWS)) (ladder/geometry.py plan_rows). Lanes of rows
// past the last one hold 0 and still take part in the shuffles. 64-bit indices.
#include "../common.cuh"
#include "row_vectors.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LANES, unsigned GROUP_ROWS,
          unsigned LOADS, unsigned L2_PREFETCH, unsigned EVICT_FIRST>
__global__ void __launch_bounds__(BLOCK)
reduce_rows_multi(const T* __restrict__ in, Acc* __restrict__ out, long long rows,
                  long long cols) {
    static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0,
                  "LANES: a power of two from 1 to 32");
    static_assert(BLOCK % rb::kWarpSize == 0 && GROUP_ROWS >= 1 && LOADS >= 1, "");
    using V = rb::Vec16<T>;
    using Vec = typename V::type;
    constexpr unsigned kGroups = BLOCK / LANES;
    constexpr long long kBlockRows = static_cast<long long>(kGroups) * GROUP_ROWS;
    const unsigned lane = threadIdx.x % LANES;
    const unsigned group = threadIdx.x / LANES;
    const long long block_first = static_cast<long long>(blockIdx.x) * kBlockRows;

    const bool exact = (reinterpret_cast<unsigned long long>(in) & 15u) == 0 &&
                       cols == static_cast<long long>(LANES) * LOADS * V::kWidth;
    if (exact && block_first + kBlockRows <= rows) {
        // The block's rows are one span of GROUP_ROWS x BLOCK x LOADS vectors: this
        // thread's load k of its g-th row lies g x BLOCK x LOADS + k x LANES vectors on
        // from one pointer. All GROUP_ROWS x LOADS loads are issued before the first add.
        const Vec* mine = reinterpret_cast<const Vec*>(in) +
                          (block_first + group) * (LANES * LOADS) + lane;
        Vec r[GROUP_ROWS][LOADS];
#pragma unroll
        for (unsigned g = 0; g < GROUP_ROWS; ++g)
#pragma unroll
            for (unsigned k = 0; k < LOADS; ++k)
                r[g][k] = rb::load16<L2_PREFETCH != 0, EVICT_FIRST != 0>(
                    mine + g * (BLOCK * LOADS) + k * LANES);
#pragma unroll
        for (unsigned g = 0; g < GROUP_ROWS; ++g) {
            Acc sum = Acc(0);
#pragma unroll
            for (unsigned k = 0; k < LOADS; ++k) sum += static_cast<Acc>(V::sum(r[g][k]));
#pragma unroll
            for (unsigned offset = LANES / 2; offset > 0; offset /= 2)
                sum += __shfl_down_sync(rb::kFullMask, sum, offset, LANES);
            if (lane == 0) out[block_first + g * kGroups + group] = sum;
        }
        return;
    }

    // Any other row or block, one row of the group after another. A row on a 16-byte
    // boundary: its first LANES x LOADS vectors in one round of loads (bound-checked), any
    // rest after (rb::row_share); a row off the boundaries: row_vec_group's reading.
    const long long vectors = cols / V::kWidth;
    const Vec* vin = reinterpret_cast<const Vec*>(in);
    const bool aligned = (reinterpret_cast<unsigned long long>(in) & 15u) == 0 &&
                         (cols * static_cast<long long>(sizeof(T))) % 16 == 0;
    constexpr long long kFirstVectors = static_cast<long long>(LANES) * LOADS;
#pragma unroll 1
    for (unsigned g = 0; g < GROUP_ROWS; ++g) {  // the same trips for the whole block
        const long long row = block_first + static_cast<long long>(g) * kGroups + group;
        Acc sum = Acc(0);
        // One row a group only: with several, this path's 64-bit row offsets cost the
        // fast path registers (and occupancy) too, and row_share reads such rows as well.
        if (GROUP_ROWS == 1 && aligned) {
            Vec r[LOADS];
#pragma unroll
            for (unsigned k = 0; k < LOADS; ++k) {  // every load issued before any add
                const long long v = lane + static_cast<long long>(k) * LANES;
                r[k] = Vec{};  // zero bits: a zero of every element type
                if (row < rows && v < vectors)
                    r[k] = rb::load16<L2_PREFETCH != 0, EVICT_FIRST != 0>(vin + row * vectors + v);
            }
#pragma unroll
            for (unsigned k = 0; k < LOADS; ++k) sum += static_cast<Acc>(V::sum(r[k]));
            if (vectors > kFirstVectors && row < rows)  // a row wider than one round
                sum += rb::row_share<T, Acc, LANES, LOADS, L2_PREFETCH != 0, EVICT_FIRST != 0>(
                    in + (row * vectors + kFirstVectors) * V::kWidth,
                    (vectors - kFirstVectors) * V::kWidth, lane, 0u, 1u);
        } else if (row < rows) {
            sum = rb::row_share<T, Acc, LANES, LOADS, L2_PREFETCH != 0, EVICT_FIRST != 0>(
                in + row * cols, cols, lane, 0u, 1u);
        }
#pragma unroll
        for (unsigned offset = LANES / 2; offset > 0; offset /= 2)
            sum += __shfl_down_sync(rb::kFullMask, sum, offset, LANES);
        if (lane == 0 && row < rows) out[row] = sum;
    }
}
