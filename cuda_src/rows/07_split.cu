// Rung row_split: several blocks per row, each adding its part with one atomicAdd into sums
// the previous launch zeroed.
//
// Changed from row_vec_block: a row is shared by `splits` blocks (grid = ROWS x splits;
// block b sums part b % splits of row b / splits). The row's vectors are dealt to its
// parts in sets of BLOCK x LOADS, set s to part s % splits (rb::block_row_share with
// parts = splits, as row_vec_block reads its row; part 0 also reads the head and tail),
// each block sums its part with row_block's block sum, and thread 0 adds the total to
// out[row] with one atomicAdd. The sums need no memset first: as the 1-D pingpong rung
// does, the launch adds into `out`, which the launch before it zeroed, and thread 0 of
// each row's part 0 zeroes next[row], which the next launch adds into (the caller swaps
// out and next after every launch). With L2_PREFETCH the loads ask L2 for the
// surrounding 256 bytes, with EVICT_FIRST they carry the evict-first (streaming) hint
// (rb::load16). The planner picks splits so that the grid has blocks_per_sm blocks per
// multiprocessor however few the rows (and never more parts than the row has sets).
// Why faster: with few long rows a block per row runs on a few multiprocessors and leaves
// the rest of the GPU idle (16 rows of 2^20 floats: 16 of 132 SMs on an H100; one row:
// one SM). Spread over splits blocks, every row is read by the whole GPU at once, and the
// finish costs one atomic per block: splits per row, a few thousand in all. Zeroing the
// next launch's sums inside this one saves the memset launch that would otherwise run
// before every reduction (the 1-D vector_load and pingpong rungs differ by 0.7 us at 2^24 on the H100,
// results/h100/run_2p24_a1ef05e.csv).
// Preconditions: BLOCK a multiple of 32, at most 1024; LOADS >= 1; `in` aligned to
// sizeof(T); out[0 .. ROWS-1] zero at the launch and next[0 .. ROWS-1] another buffer of
// ROWS sums; launches that share the pair run in order on one stream; splits >= 1 and
// ROWS x splits at most 2^31 - 1 (the grid is exactly that: a block past the last row
// returns as a whole, before its barrier). Float atomics make the result depend on the
// order a row's blocks finish in: not deterministic. 64-bit indices.
#include "../common.cuh"
#include "row_vectors.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, unsigned L2_PREFETCH,
          unsigned EVICT_FIRST>
__global__ void __launch_bounds__(BLOCK)
reduce_rows_split(const T* __restrict__ in, Acc* __restrict__ out, long long rows,
                  long long cols, long long splits, Acc* __restrict__ next) {
    const long long row = blockIdx.x / splits;
    const unsigned part = static_cast<unsigned>(blockIdx.x % splits);
    if (row >= rows) return;  // the whole block: no thread is left at the barrier
    if (part == 0 && threadIdx.x == 0) next[row] = Acc(0);
    Acc sum = rb::block_row_share<T, Acc, BLOCK, LOADS, L2_PREFETCH != 0, EVICT_FIRST != 0>(
        in + row * cols, cols, threadIdx.x, part, static_cast<unsigned>(splits));
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) atomicAdd(out + row, sum);
}
