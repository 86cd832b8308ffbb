// Rung row_tile: a block's rows read as one contiguous tile of 16-byte loads, then summed
// from shared memory.
//
// Changed from row_cluster: the ladder turns back from long rows to narrow ones. Since
// row_vec_group every rung reads a row by itself, and a block (or a cluster) no longer
// reads its rows row by row here. The rows a block owns (as many whole rows as fit a tile
// of BLOCK x TILE_LOADS 16-byte vectors) are consecutive in memory, so the block reads
// them as one span, exactly as the 1-D one-shot read reads a tile: thread t loads vectors
// t, t + BLOCK, ..., all TILE_LOADS issued before any is used, and stores them into
// shared memory at the same offsets. Elements before the span's first 16-byte boundary
// and after its last whole vector (fewer than one vector each) are read one per thread.
// After one barrier, each row is summed from shared memory by a group of `lanes` lanes
// (the largest power of two up to 32 that gives every row of the block its own group at
// once: 1 where the rows outnumber the threads), with width-limited shuffles, and the
// group's first lane writes the row's sum. With L2_PREFETCH the tile's loads ask L2 for
// the surrounding 256 bytes, with EVICT_FIRST they carry the evict-first (streaming) hint
// (rb::load16).
// Why faster: row_vec_group can use 16-byte loads only where a row starts on a 16-byte
// boundary; with odd COLS (33, 1000003) or narrow rows (4, 8, 16 floats) its loads are
// split into heads and tails, one element a lane, or a lane reads one vector and waits.
// Here the alignment of a row does not matter (only the span's two ends are read one
// element at a time), every thread keeps TILE_LOADS x 16 bytes in flight whatever COLS,
// and each block reads one tile and exits, the shape of the fastest pure read
// (ceiling.cu's read_one_shot). The rows' sums come from shared memory, which costs
// no DRAM bandwidth.
// Smaller one-tile blocks (loads 1 or 2) were slower on both GPUs, and so was a
// persistent grid (a few blocks an SM, each looping over tiles with the next tile's loads
// in flight while it sums) at every total but one (docs/rows.md, "Rows of 33").
// Preconditions: BLOCK a multiple of 32, at most 1024; LOADS >= 1 (the tile holds
// BLOCK x TILE_LOADS vectors, TILE_LOADS = min(LOADS, 2048 / BLOCK): 32 KB of shared
// memory at most); a row fits the tile (COLS <= BLOCK x TILE_LOADS x 16 / sizeof(T));
// the grid is ceil(ROWS / rows_per_block), rows_per_block = that tile's elements / COLS
// (ladder/geometry.py plan_tiled_rows computes the same); `in` aligned to sizeof(T).
// 64-bit indices.
#include "../common.cuh"

namespace rb {

// Vectors of a row_tile tile at block size BLOCK and `loads` asked for: capped so that the
// tile takes at most 32 KB of shared memory (2048 vectors).
__host__ __device__ constexpr unsigned tile_vectors(unsigned block, unsigned loads) {
    return block * (loads < 2048u / block ? loads : 2048u / block);
}

}  // namespace rb

namespace rb {

// One tile's span (the rows `first` .. `first + owned` - 1, read as one run of elements)
// and what thread threadIdx.x loads of it: its vectors of the span's aligned body and,
// for the first few threads, one element of the span's unaligned head or tail.
template <typename T, unsigned BLOCK, unsigned LOADS>
struct TileLoads {
    long long first, owned;
    unsigned shift, first_vector;
    Split16<T> split;
    long long count;
    typename Vec16<T>::type r[LOADS];
    T head, tail;
};

// Issues every load of tile `t` (rows t x per_block on) before any is used: the caller
// stages them later, so they stay in flight meanwhile.
template <typename T, unsigned BLOCK, unsigned LOADS, bool L2_PREFETCH, bool EVICT_FIRST>
__device__ __forceinline__ void issue_tile(TileLoads<T, BLOCK, LOADS>& tile,
                                           const T* __restrict__ in, long long rows,
                                           long long cols, long long per_block, long long t) {
    using V = Vec16<T>;
    tile.first = t * per_block;
    tile.owned = rows - tile.first < per_block ? rows - tile.first : per_block;
    tile.count = tile.owned * cols;
    const T* span = in + tile.first * cols;
    // The span's offset within its 16-byte word, in elements: element i of the span is
    // staged at shift + i, so the body vectors (from the first boundary) stay aligned.
    tile.shift = static_cast<unsigned>(
        (reinterpret_cast<unsigned long long>(span) & 15u) / sizeof(T));
    tile.split = split16(span, tile.count);
    tile.first_vector = static_cast<unsigned>((tile.shift + tile.split.head) / V::kWidth);
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) {
        const long long v = static_cast<long long>(k) * BLOCK + threadIdx.x;
        tile.r[k] = typename V::type{};
        if (v < tile.split.vectors)
            tile.r[k] = load16<L2_PREFETCH, EVICT_FIRST>(tile.split.body + v);
    }
    if (threadIdx.x < tile.split.head) tile.head = span[threadIdx.x];
    if (threadIdx.x < tile.count - tile.split.tail_start)
        tile.tail = span[tile.split.tail_start + threadIdx.x];
}

// Stores a tile's loads into shared memory at the span's offsets (waiting for them).
template <typename T, unsigned BLOCK, unsigned LOADS>
__device__ __forceinline__ void stage_tile(const TileLoads<T, BLOCK, LOADS>& tile,
                                           typename Vec16<T>::type* smem) {
    T* const staged = reinterpret_cast<T*>(smem);
    if (threadIdx.x < tile.split.head) staged[tile.shift + threadIdx.x] = tile.head;
    if (threadIdx.x < tile.count - tile.split.tail_start)
        staged[tile.shift + tile.split.tail_start + threadIdx.x] = tile.tail;
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) {
        const long long v = static_cast<long long>(k) * BLOCK + threadIdx.x;
        if (v < tile.split.vectors) smem[tile.first_vector + v] = tile.r[k];
    }
}

// Each of the tile's `owned` rows (staged from `shift` on) summed by a group of lanes: the
// most, a power of two up to a warp, that still give each row a group of its own at once
// (one lane a row where the rows outnumber the threads), every thread busy and as few
// shuffles as that allows; the group's first lane writes out[first + row].
template <typename T, typename Acc, unsigned BLOCK>
__device__ __forceinline__ void sum_staged_rows(const T* staged, Acc* __restrict__ out,
                                                long long first, long long owned,
                                                long long cols) {
    unsigned lanes = 1;
    while (lanes < kWarpSize && 2 * lanes * owned <= BLOCK) lanes *= 2;
    const unsigned groups = BLOCK / lanes;
    const unsigned lane = threadIdx.x % lanes;
    for (long long base = 0; base < owned; base += groups) {  // the same trips for all
        const long long row = base + threadIdx.x / lanes;
        Acc sum = Acc(0);
        if (row < owned) {
            const T* staged_row = staged + row * cols;
#pragma unroll 4
            for (long long c = lane; c < cols; c += lanes) sum += to_acc<Acc>(staged_row[c]);
        }
        for (unsigned offset = lanes / 2; offset > 0; offset /= 2)
            sum += __shfl_down_sync(kFullMask, sum, offset, lanes);
        if (lane == 0 && row < owned) out[first + row] = sum;
    }
}

}  // namespace rb

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, unsigned L2_PREFETCH,
          unsigned EVICT_FIRST>
__global__ void __launch_bounds__(BLOCK)
reduce_rows_tile(const T* __restrict__ in, Acc* __restrict__ out, long long rows,
                 long long cols) {
    static_assert(BLOCK % rb::kWarpSize == 0 && BLOCK <= 1024 && LOADS >= 1, "");
    using V = rb::Vec16<T>;
    using Vec = typename V::type;
    constexpr unsigned kVectors = rb::tile_vectors(BLOCK, LOADS);
    constexpr unsigned kLoads = kVectors / BLOCK;
    constexpr long long kTile = static_cast<long long>(kVectors) * V::kWidth;  // elements
    constexpr bool kHint = L2_PREFETCH != 0, kEvict = EVICT_FIRST != 0;
    // One vector more than the tile: the span starts up to kWidth - 1 elements into its
    // first vector of shared memory, so that its aligned body lands on aligned vectors.
    __shared__ Vec smem[kVectors + 1];
    const T* const staged = reinterpret_cast<const T*>(smem);

    const long long per_block = kTile / cols;
    if (static_cast<long long>(blockIdx.x) * per_block >= rows) return;  // the whole block
    rb::TileLoads<T, BLOCK, kLoads> tile;
    rb::issue_tile<T, BLOCK, kLoads, kHint, kEvict>(tile, in, rows, cols, per_block, blockIdx.x);
    rb::stage_tile(tile, smem);
    __syncthreads();
    rb::sum_staged_rows<T, Acc, BLOCK>(staged + tile.shift, out, tile.first, tile.owned, cols);
}
