// The same-shape read: the yardstick of the row ladder (`run --shape`). Not a rung.
//
// What: the read kernels of ceiling.cu, each with one addition: besides reading the whole
// ROWS x COLS input once as 16-byte words (the input is one row-major buffer, so its rows
// are just consecutive words), the kernel writes `out_words` 32-bit words, ROWS values of
// the accumulator type (ROWS words for float and int, 2 x ROWS for double). Thread g of
// the grid writes words g, g + threads, g + 2 x threads, ... (consecutive threads write
// consecutive words), each the fold of what it read, after its loads: the write depends
// on the read, as a row's sum does, and no load can be dropped.
//  - read_rows_one_shot<BLOCK, LOADS, HINT, BLOCK_FOLD>: read_one_shot and its writes.
//  - read_rows_grid_stride<BLOCK, LOADS, BLOCKS_PER_SM, HINT>: read_grid_stride and its
//    writes.
// Why: a row reduction must read every element once and write one value a row, nothing
// less. The 1-D same-size read reads the elements but writes nothing; at 2^20 x 8 float32
// the row sums' writes are an eighth of the reads, and at 2^24 x 1 as many bytes as the
// reads, so a row rung measured against the 1-D read would look slower than it is. These
// kernels move exactly a row sum's bytes (in reads and in writes) with the fastest read
// shapes of ceiling.cu; the fastest of them over a case's own buffer is its `read_us`,
// and `pct_read` (100 x read / median) says how close a row rung comes to only moving its
// bytes (reducebench/measuring/read_ceiling.py lists the kernels,
// reducebench/device/ceiling_timing.py times them as it times the 1-D read).
// Preconditions: those of ceiling.cu's kernels (`in` 16-byte aligned, `words` 16-byte
// words; read_rows_one_shot needs ceil(words / (BLOCK * LOADS)) blocks), and `out` holds
// `out_words` writable ints. Only the time matters; tests/test_gpu_rows.py checks that
// every word is read and every out word written.

#include "ceiling.cu"

// Thread g of the grid writes out[g], out[g + threads], ...: every word of `out` once,
// consecutive threads to consecutive words, whatever the grid.
__device__ __forceinline__ void write_row_values(int folded, int* out, long long out_words) {
    const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < out_words; i += threads) {
        out[i] = folded;
    }
}

template <unsigned BLOCK, unsigned LOADS, unsigned HINT, bool BLOCK_FOLD = false>
__global__ void __launch_bounds__(BLOCK)
read_rows_one_shot(const int4* __restrict__ in, long long words, int* sink,
                   int* __restrict__ out, long long out_words) {
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024 && LOADS >= 1, "");
    const long long first = static_cast<long long>(blockIdx.x) * (BLOCK * LOADS) + threadIdx.x;
    int4 r[LOADS];
    if (first + static_cast<long long>(LOADS - 1) * BLOCK < words) {
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) r[k] = read_word<HINT>(in + first + k * BLOCK);
    } else {  // the last, partial tile
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k)
            r[k] = first + k * BLOCK < words ? read_word<HINT>(in + first + k * BLOCK)
                                             : make_int4(0, 0, 0, 0);
    }
    int folded = 0;
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) folded ^= fold(r[k]);
    write_row_values(folded, out, out_words);
    if constexpr (BLOCK_FOLD) {  // one_shot's block sum, without its atomicAdd
        const float total = rb::block_sum<float, BLOCK, true>(__int_as_float(folded));
        if (threadIdx.x == 0) keep_alive(__float_as_int(total), sink);
    } else {
        keep_alive(folded, sink);
    }
}

template <unsigned BLOCK, unsigned LOADS, unsigned BLOCKS_PER_SM, unsigned HINT>
__global__ void __launch_bounds__(BLOCK, BLOCKS_PER_SM)
read_rows_grid_stride(const int4* __restrict__ in, long long words, int* sink,
                      int* __restrict__ out, long long out_words) {
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024 && LOADS >= 1, "");
    const long long stride = static_cast<long long>(gridDim.x) * BLOCK * LOADS;
    long long w = static_cast<long long>(blockIdx.x) * (BLOCK * LOADS) + threadIdx.x;
    int4 acc[LOADS];  // one accumulator word per load, as in read_grid_stride
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) acc[k] = make_int4(0, 0, 0, 0);
    for (; w + static_cast<long long>(LOADS - 1) * BLOCK < words; w += stride) {
        int4 r[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) r[k] = read_word<HINT>(in + w + k * BLOCK);
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) {
            acc[k].x ^= r[k].x;
            acc[k].y ^= r[k].y;
            acc[k].z ^= r[k].z;
            acc[k].w ^= r[k].w;
        }
    }
    int folded = 0;
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) {  // the one partial set left, if any
        if (w + k * BLOCK < words) folded ^= fold(read_word<HINT>(in + w + k * BLOCK));
        folded ^= fold(acc[k]);
    }
    write_row_values(folded, out, out_words);
    keep_alive(folded, sink);
}
