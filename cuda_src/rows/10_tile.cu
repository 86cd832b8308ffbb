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
    // One vector more than the tile: the span starts up to kWidth - 1 elements into its
    // first vector of shared memory, so that its aligned body lands on aligned vectors.
    __shared__ Vec tile[kVectors + 1];
    T* const staged = reinterpret_cast<T*>(tile);

    const long long per_block = kTile / cols;
    const long long first = static_cast<long long>(blockIdx.x) * per_block;
    if (first >= rows) return;  // the whole block: no thread is left at the barrier
    const long long owned = rows - first < per_block ? rows - first : per_block;
    const long long count = owned * cols;
    const T* span = in + first * cols;
    // The span's offset within its 16-byte word, in elements: element i of the span is
    // staged at shift + i, so the body vectors (from the first boundary) stay aligned.
    const unsigned shift = static_cast<unsigned>(
        (reinterpret_cast<unsigned long long>(span) & 15u) / sizeof(T));
    const rb::Split16<T> split = rb::split16(span, count);
    const unsigned first_vector = static_cast<unsigned>((shift + split.head) / V::kWidth);

    Vec r[kLoads];
#pragma unroll
    for (unsigned k = 0; k < kLoads; ++k) {  // every load issued before the first store
        const long long v = static_cast<long long>(k) * BLOCK + threadIdx.x;
        r[k] = Vec{};
        if (v < split.vectors) r[k] = rb::load16<L2_PREFETCH != 0, EVICT_FIRST != 0>(split.body + v);
    }
    if (threadIdx.x < split.head) staged[shift + threadIdx.x] = span[threadIdx.x];
    if (threadIdx.x < count - split.tail_start)
        staged[shift + split.tail_start + threadIdx.x] = span[split.tail_start + threadIdx.x];
#pragma unroll
    for (unsigned k = 0; k < kLoads; ++k) {
        const long long v = static_cast<long long>(k) * BLOCK + threadIdx.x;
        if (v < split.vectors) tile[first_vector + v] = r[k];
    }
    __syncthreads();

    // A row's lanes: the most, a power of two up to a warp, that still give each of the
    // block's rows a group of its own at once (one lane a row where the rows outnumber
    // the threads): every thread busy, and as few shuffles as that allows.
    unsigned lanes = 1;
    while (lanes < rb::kWarpSize && 2 * lanes * owned <= BLOCK) lanes *= 2;
    const unsigned groups = BLOCK / lanes;
    const unsigned lane = threadIdx.x % lanes;
    for (long long base = 0; base < owned; base += groups) {  // the same trips for all
        const long long row = base + threadIdx.x / lanes;
        Acc sum = Acc(0);
        if (row < owned) {
            const T* staged_row = staged + shift + row * cols;
#pragma unroll 4
            for (long long c = lane; c < cols; c += lanes) sum += rb::to_acc<Acc>(staged_row[c]);
        }
        for (unsigned offset = lanes / 2; offset > 0; offset /= 2)
            sum += __shfl_down_sync(rb::kFullMask, sum, offset, lanes);
        if (lane == 0 && row < owned) out[first + row] = sum;
    }
}
