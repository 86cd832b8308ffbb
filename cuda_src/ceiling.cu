// The measured ceiling: pure streaming reads; nothing is summed across blocks or written.
// Not a rung.
//
// What: kernels that read a buffer of 16-byte words once and do nothing with it but what
// keeps the loads alive: each thread folds its words into one register with XOR and
// stores it only under a condition that practically never holds (as harness.cu's
// flush_l2 does), so the compiler cannot drop a load, and nothing is written.
//  - read_one_shot<BLOCK, LOADS, HINT>: one block per BLOCK * LOADS words, LOADS loads per
//    thread issued before any is used, no loop: every byte is requested as early as the
//    grid can be scheduled. <1024, 4> is one block of 1024 threads per 16K float32.
//  - read_grid_stride<BLOCK, LOADS, BLOCKS_PER_SM, HINT>: a persistent grid of BLOCKS_PER_SM
//    blocks per SM looping over the buffer with LOADS loads in flight per thread, the
//    shape of the ladder's vector rungs. __launch_bounds__ caps the registers so that
//    all BLOCKS_PER_SM blocks are resident at once (no second wave to wait for).
//  - HINT, the load each kernel issues: kLdg, the read-only path (ld.global.nc, __ldg);
//    kEvictFirst, the evict-first hint (ld.global.cs), in case it streams faster; and
//    kL2Prefetch, rb::load16<true> of common.cuh (ld.global.nc.L2::256B), the very load
//    the rungs issue with l2_prefetch=1. A reduction that loads with a hint the read
//    lacked could beat its own yardstick: one_shot 512 x 2 with the L2 prefetch hint was
//    at 100.08 to 100.13% of a read without it over 2^31 and 2^32 elements on the H100.
//  - BLOCK_FOLD (read_one_shot): the block ends with one_shot's own block sum over the
//    folded words (float shuffles, shared memory, a barrier), and only thread 0 keeps
//    the total alive: the reduction's finish without the atomicAdd that combines blocks.
//    With the hint above one_shot 512 x 2 still streamed 0.25% faster than the read of
//    its own tile and load over 8 GiB on the H100, the finish being the one difference
//    left between the two kernels. <512, 2, kL2Prefetch, true> is the fastest read there
//    from 2 GiB, by 0.11 to 0.12% from 4 GiB (BENCHMARKS.md); why a block that stays
//    for its block sum streams a multi-GiB input faster was not measured.
// Why: "% of theoretical peak" measures against a bandwidth no kernel reaches. The best
// of these kernels over a large buffer is what this GPU can actually stream, the
// ceiling a reduction (which must read every byte once) is compared against
// (pct_ceiling), and at a case's own size the same-size read (pct_read): the fastest
// of them over the case's bytes (reducebench/measuring/read_ceiling.py lists them and picks
// the best, reducebench/device/ceiling_timing.py times them like a rung, docs/tuning.md).
// Preconditions: `in` 16-byte aligned (any cudaMalloc'd buffer is) and `words` 16-byte
// words long; BLOCK a multiple of 32, at most 1024; LOADS >= 1; `sink` one writable int.
// Any grid for read_grid_stride (sm_count * BLOCKS_PER_SM blocks make one wave);
// read_one_shot needs ceil(words / (BLOCK * LOADS)) blocks (fewer leave words unread).
// Only the time matters; tests/test_gpu_tuning.py checks that every word is read.

#include "common.cuh"

enum : unsigned { kLdg = 0u, kEvictFirst = 1u, kL2Prefetch = 2u };

template <unsigned HINT>
__device__ __forceinline__ int4 read_word(const int4* p) {
    static_assert(HINT <= kL2Prefetch, "HINT: kLdg, kEvictFirst or kL2Prefetch");
    if constexpr (HINT == kEvictFirst) {
        return __ldcs(p);
    } else {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
        return __ldg(p);  // .L2::256B needs sm_80: there the hint's kernels read plainly
#else
        return rb::load16<HINT == kL2Prefetch>(p);
#endif
    }
}

__device__ __forceinline__ int fold(int4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

// A store the compiler cannot prove dead keeps every load; it practically never runs.
// The sentinel's bits are a normal float (1.99999976f), so that a block fold of one
// thread's marked word and other threads' zeros keeps it exactly: a GPU test marks one
// word of an otherwise zero buffer and checks that every kernel stores it (a NaN
// sentinel would come out of the float sum as the canonical NaN).
constexpr int kKeepAliveSentinel = 0x3ffffffe;
__device__ __forceinline__ void keep_alive(int folded, int* sink) {
    if (folded == kKeepAliveSentinel) *sink = folded;
}

template <unsigned BLOCK, unsigned LOADS, unsigned HINT, bool BLOCK_FOLD = false>
__global__ void __launch_bounds__(BLOCK)
read_one_shot(const int4* __restrict__ in, long long words, int* sink) {
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
    if constexpr (BLOCK_FOLD) {  // one_shot's block sum, without its atomicAdd
        const float total = rb::block_sum<float, BLOCK, true>(__int_as_float(folded));
        if (threadIdx.x == 0) keep_alive(__float_as_int(total), sink);
    } else {
        keep_alive(folded, sink);
    }
}

template <unsigned BLOCK, unsigned LOADS, unsigned BLOCKS_PER_SM, unsigned HINT>
__global__ void __launch_bounds__(BLOCK, BLOCKS_PER_SM)
read_grid_stride(const int4* __restrict__ in, long long words, int* sink) {
    static_assert(BLOCK % 32 == 0 && BLOCK <= 1024 && LOADS >= 1, "");
    const long long stride = static_cast<long long>(gridDim.x) * BLOCK * LOADS;
    long long w = static_cast<long long>(blockIdx.x) * (BLOCK * LOADS) + threadIdx.x;
    // One accumulator word per load, folded lane by lane: with a single running fold,
    // ptxas reuses the first loads' registers and keeps only 5 of 16 loads outstanding
    // (sm_90 SASS); with one accumulator per load it issues 14 before the first use.
    int4 acc[LOADS];
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
    keep_alive(folded, sink);
}
