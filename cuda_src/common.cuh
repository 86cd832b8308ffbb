// Shared by every rung: reading an input element into the accumulator type, and the
// warp and block sums that the shuffle rungs build on. Kept small on purpose: each rung
// file shows its own idea in full and takes only these plumbing pieces from here. The
// second part holds what later rungs reuse from an earlier one (the complete-unrolled
// shared-memory tree, the 16-byte vectorised grid-stride body).
#pragma once
#include <cuda_fp16.h>
#include <cuda_bf16.h>

namespace rb {

enum : unsigned { kWarpSize = 32u, kFullMask = 0xffffffffu };

// Half types are read as half but summed in float: 2^24 halves summed in half precision
// stop growing at 2048, where adding 1 no longer changes the sum.
template <typename Acc, typename T>
__device__ __forceinline__ Acc to_acc(T x) { return static_cast<Acc>(x); }
template <>
__device__ __forceinline__ float to_acc<float, __half>(__half x) { return __half2float(x); }
template <>
__device__ __forceinline__ float to_acc<float, __nv_bfloat16>(__nv_bfloat16 x) {
    return __bfloat162float(x);
}

// Tree sum of a full warp with __shfl_down_sync: after 5 steps lane 0 holds the sum of
// all 32 lanes (the other lanes hold partial sums). Every lane of the warp must call it:
// the full mask promises that all 32 lanes take part.
template <typename Acc>
__device__ __forceinline__ Acc warp_sum(Acc v) {
#pragma unroll
    for (unsigned offset = kWarpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(kFullMask, v, offset);
    return v;
}

// The step between a block sum's two levels: lane 0 of each warp leaves its warp's total
// in shared memory, then a barrier; the BLOCK/32 totals are then readable by all.
template <typename Acc, unsigned BLOCK>
__device__ __forceinline__ const Acc* publish_warp_totals(Acc v, unsigned lane, unsigned warp) {
    __shared__ Acc warp_totals[BLOCK / kWarpSize];
    if (lane == 0) warp_totals[warp] = v;
    __syncthreads();
    return warp_totals;
}

template <typename Acc> struct IsInt { static constexpr bool value = false; };
template <> struct IsInt<int> { static constexpr bool value = true; };

// The smallest power of two >= x (x >= 1).
__host__ __device__ constexpr unsigned pow2_at_least(unsigned x) {
    return x <= 1 ? 1u : 2u * pow2_at_least((x + 1) / 2);
}

// The sum of lanes 0..COUNT-1 into lane 0, the other lanes holding 0 (every lane calls):
// for int one redux.sync (sm_80 and later), otherwise shuffles over the first
// pow2_at_least(COUNT) lanes only (3 steps for 8 values, not 5).
template <unsigned COUNT, typename Acc>
__device__ __forceinline__ Acc first_lanes_sum(Acc v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    constexpr bool kRedux = IsInt<Acc>::value;
#else
    constexpr bool kRedux = false;
#endif
    if constexpr (kRedux) {
        return __reduce_add_sync(kFullMask, v);
    } else {
#pragma unroll
        for (unsigned offset = pow2_at_least(COUNT) / 2; offset > 0; offset /= 2)
            v += __shfl_down_sync(kFullMask, v, offset);
        return v;
    }
}

// Sum over a block of BLOCK threads (a multiple of 32): each warp reduces with shuffles,
// lane 0 of each warp leaves its total in shared memory, and warp 0 reduces those. The
// result is valid in thread 0 only. Warp 0 reads only the BLOCK/32 slots that warps
// wrote, never an unwritten one. Call it from every thread of the block, and put a
// __syncthreads() between two calls in one kernel (they share warp_totals).
// SHORT: the form of the rung at the top (one_shot), where every cycle between a block's
// last load and its exit is paid by the next tile waiting for the block's slot: both
// levels through first_lanes_sum (for int one redux.sync per level instead of 5 shuffle
// steps; for the other types a second level over the BLOCK/32 warp totals only). The
// earlier rungs keep the plain form their files describe.
template <typename Acc, unsigned BLOCK, bool SHORT = false>
__device__ __forceinline__ Acc block_sum(Acc v) {
    static_assert(BLOCK % kWarpSize == 0 && BLOCK <= 1024, "BLOCK: a multiple of 32, <= 1024");
    constexpr unsigned kWarps = BLOCK / kWarpSize;
    if constexpr (SHORT) {  // if constexpr: the plain form never instantiates the short one
        v = first_lanes_sum<kWarpSize>(v);
    } else {
        v = warp_sum(v);
    }
    if constexpr (kWarps > 1) {
        const unsigned lane = threadIdx.x % kWarpSize;
        const unsigned warp = threadIdx.x / kWarpSize;
        const Acc* warp_totals = publish_warp_totals<Acc, BLOCK>(v, lane, warp);
        if (warp == 0) {
            v = lane < kWarps ? warp_totals[lane] : Acc(0);
            if constexpr (SHORT) {
                v = first_lanes_sum<kWarps>(v);
            } else {
                v = warp_sum(v);
            }
        }
    }
    return v;
}

}  // namespace rb

// ---- Pieces shared by the later rungs -------------------------------------------------

namespace rb {

// The complete-unrolled shared-memory tree of rung complete_unroll (07), for the rungs
// after it that reuse it (smem_unroll4, multi_elem): rung 07 spells it out in full.
// Every thread passes its value; the block's sum is valid in thread 0 only. The steps
// above one warp are chosen at compile time from BLOCK, each followed by __syncthreads;
// the last warp works without a block barrier but with __syncwarp() between reading a
// neighbour's slot and overwriting its own (lanes of a warp need not run in lockstep
// from Volta on, so the old volatile-only form is a data race). Call it from every
// thread of the block, once per kernel (or with a __syncthreads() between two calls).
template <typename Acc, unsigned BLOCK>
__device__ __forceinline__ Acc smem_tree_sum(Acc v) {
    static_assert(BLOCK >= kWarpSize && BLOCK <= 1024 && (BLOCK & (BLOCK - 1)) == 0,
                  "BLOCK: a power of two from 32 to 1024");
    __shared__ Acc partial[BLOCK];
    const unsigned tid = threadIdx.x;
    partial[tid] = v;
    __syncthreads();
    if constexpr (BLOCK >= 1024) {
        if (tid < 512) partial[tid] = v = v + partial[tid + 512];
        __syncthreads();
    }
    if constexpr (BLOCK >= 512) {
        if (tid < 256) partial[tid] = v = v + partial[tid + 256];
        __syncthreads();
    }
    if constexpr (BLOCK >= 256) {
        if (tid < 128) partial[tid] = v = v + partial[tid + 128];
        __syncthreads();
    }
    if constexpr (BLOCK >= 128) {
        if (tid < 64) partial[tid] = v = v + partial[tid + 64];
        __syncthreads();
    }
    if (tid < kWarpSize) {
        // Slots 0..2*offset-1 hold valid partial sums before the step of `offset`. With
        // BLOCK == 32 there is no slot past 31, so only the lanes that matter read.
        constexpr unsigned kFirst = BLOCK >= 64 ? kWarpSize : kWarpSize / 2;
#pragma unroll
        for (unsigned offset = kFirst; offset > 0; offset /= 2) {
            if (BLOCK >= 64 || tid < offset) v += partial[tid + offset];
            __syncwarp();
            partial[tid] = v;
            __syncwarp();
        }
    }
    return v;
}

// 16-byte vector loads for the vectorised rungs (vector_load, single_pass): per element
// type, the vector type, how many elements it holds, and the sum of its elements in the
// accumulator type. Half types travel as uint4 (8 halves) and are converted to float
// before any add.
template <typename T> struct Vec16;

template <> struct Vec16<float> {
    using type = float4;
    static constexpr unsigned kWidth = 4;
    static __device__ __forceinline__ type load(const type* p) { return __ldg(p); }
    static __device__ __forceinline__ float sum(type v) { return (v.x + v.y) + (v.z + v.w); }
};

template <> struct Vec16<int> {
    using type = int4;
    static constexpr unsigned kWidth = 4;
    static __device__ __forceinline__ type load(const type* p) { return __ldg(p); }
    static __device__ __forceinline__ int sum(type v) { return (v.x + v.y) + (v.z + v.w); }
};

template <> struct Vec16<double> {
    using type = double2;
    static constexpr unsigned kWidth = 2;
    static __device__ __forceinline__ type load(const type* p) { return __ldg(p); }
    static __device__ __forceinline__ double sum(type v) { return v.x + v.y; }
};

// Two halves packed in one 32-bit word, low half first (little endian), in float.
__device__ __forceinline__ float half_pair_sum(unsigned w) {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(w & 0xffffu))) +
           __half2float(__ushort_as_half(static_cast<unsigned short>(w >> 16)));
}
__device__ __forceinline__ float bf16_pair_sum(unsigned w) {
    return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(w & 0xffffu))) +
           __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(w >> 16)));
}

template <> struct Vec16<__half> {
    using type = uint4;
    static constexpr unsigned kWidth = 8;
    static __device__ __forceinline__ type load(const type* p) { return __ldg(p); }
    static __device__ __forceinline__ float sum(type v) {
        return (half_pair_sum(v.x) + half_pair_sum(v.y)) +
               (half_pair_sum(v.z) + half_pair_sum(v.w));
    }
};

template <> struct Vec16<__nv_bfloat16> {
    using type = uint4;
    static constexpr unsigned kWidth = 8;
    static __device__ __forceinline__ type load(const type* p) { return __ldg(p); }
    static __device__ __forceinline__ float sum(type v) {
        return (bf16_pair_sum(v.x) + bf16_pair_sum(v.y)) +
               (bf16_pair_sum(v.z) + bf16_pair_sum(v.w));
    }
};

// A 16-byte load through the read-only path. With L2_PREFETCH the load also asks L2 for
// the whole 256-byte block around it (the .L2::256B qualifier, sm_80 and later): a warp's
// 512 contiguous bytes become two large DRAM requests, and the neighbouring sectors the
// next loads want are already on their way. With EVICT_FIRST it carries the evict-first
// (streaming) hint instead of the read-only path (ld.global.cs, as ceiling.cu's
// kEvictFirst): the lines read once are the first that L2 lets go. That hint is what makes
// the same-shape read's fastest kernel on the H200 at narrow rows fastest (its one-shot
// 1024x4 evict-first reads 4194304 x 16 float32 in 62.26 us, the same read without it
// 67.42; results/logs/probe_reads_h200_8b95846.txt).
template <bool L2_PREFETCH, bool EVICT_FIRST = false, typename Vec>
__device__ __forceinline__ Vec load16(const Vec* p) {
    static_assert(sizeof(Vec) == 16, "a 16-byte vector");
    if constexpr (!L2_PREFETCH && !EVICT_FIRST) {
        return __ldg(p);
    } else {
        uint4 bits;
        if constexpr (L2_PREFETCH && EVICT_FIRST) {
            asm("ld.global.cs.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                : "=r"(bits.x), "=r"(bits.y), "=r"(bits.z), "=r"(bits.w)
                : "l"(p));
        } else if constexpr (L2_PREFETCH) {
            asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                : "=r"(bits.x), "=r"(bits.y), "=r"(bits.z), "=r"(bits.w)
                : "l"(p));
        } else {
            asm("ld.global.cs.v4.u32 {%0, %1, %2, %3}, [%4];"
                : "=r"(bits.x), "=r"(bits.y), "=r"(bits.z), "=r"(bits.w)
                : "l"(p));
        }
        Vec v;
        memcpy(&v, &bits, sizeof(Vec));
        return v;
    }
}

// n elements at `in` as the vector rungs read them: `head` elements before the first
// 16-byte boundary (none for a cudaMalloc'd buffer), `vectors` whole 16-byte vectors from
// `body`, and a tail from `tail_start` to n; head and tail are each shorter than a vector.
template <typename T>
struct Split16 {
    long long head;
    long long vectors;
    long long tail_start;
    const typename Vec16<T>::type* body;
};

template <typename T>
__device__ __forceinline__ Split16<T> split16(const T* in, long long n) {
    const unsigned long long address = reinterpret_cast<unsigned long long>(in);
    long long head = static_cast<long long>(((16u - (address & 15u)) & 15u) / sizeof(T));
    if (head > n) head = n;
    const long long vectors = (n - head) / Vec16<T>::kWidth;
    return {head, vectors, head + vectors * Vec16<T>::kWidth,
            reinterpret_cast<const typename Vec16<T>::type*>(in + head)};
}

// The head and the tail read one element per thread by the calling block (BLOCK >= the
// vector width, so one pass covers each); threads past them return 0.
template <typename T, typename Acc>
__device__ __forceinline__ Acc head_and_tail_of(const T* in, long long n,
                                                const Split16<T>& split) {
    Acc sum = Acc(0);
    const long long tid = threadIdx.x;
    if (tid < split.head) sum += to_acc<Acc>(in[tid]);
    if (tid < n - split.tail_start) sum += to_acc<Acc>(in[split.tail_start + tid]);
    return sum;
}

// Block 0 reads the head and the tail; every other block's threads return 0.
template <typename T, typename Acc>
__device__ __forceinline__ Acc head_and_tail_sum(const T* in, long long n,
                                                 const Split16<T>& split) {
    return blockIdx.x == 0 ? head_and_tail_of<T, Acc>(in, n, split) : Acc(0);
}

// `sum` plus the vectors of `vectors` whole 16-byte vectors at `body` (16-byte aligned)
// that thread `lane` of part `part` reads: sets of LANES x LOADS vectors, set s to part
// s % parts, lane l loading vectors l, l + LANES, ... of its set (each load instruction of
// a warp reads 32 consecutive vectors), all LOADS issued before the first add; whole sets
// without a bound check, then the one partial set left with a check a vector, its loads
// too all issued before the first add: written as one conditional load-and-add per k,
// ptxas waited for each load before issuing the next, one DRAM latency per load (+0.8 us
// for bfloat16 2^11 on the H200). The body of a grid-stride sum (vector_thread_sum:
// LANES = BLOCK, a part a block) and of a row's share (rows/row_vectors.cuh).
template <typename T, typename Acc, unsigned LANES, unsigned LOADS, bool L2_PREFETCH,
          bool EVICT_FIRST>
__device__ __forceinline__ Acc vector_sets_share(Acc sum, const typename Vec16<T>::type* body,
                                                 long long vectors, unsigned lane,
                                                 unsigned part, unsigned parts) {
    using V = Vec16<T>;
    using Vec = typename V::type;
    constexpr long long kSet = static_cast<long long>(LANES) * LOADS;  // vectors a set
    const long long stride = static_cast<long long>(parts) * kSet;
    long long v = static_cast<long long>(part) * kSet + lane;
    for (; v + static_cast<long long>(LOADS - 1) * LANES < vectors; v += stride) {
        Vec r[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k)
            r[k] = load16<L2_PREFETCH, EVICT_FIRST>(body + v + k * LANES);
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) sum += static_cast<Acc>(V::sum(r[k]));
    }
    // v + (LOADS-1) x LANES >= vectors: this set is the lane's last (its next set starts
    // at least LANES x LOADS vectors on, past the end).
    Vec r[LOADS];
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) {
        r[k] = Vec{};  // zero bits: a zero of every element type
        if (v + k * LANES < vectors)
            r[k] = load16<L2_PREFETCH, EVICT_FIRST>(body + v + k * LANES);
    }
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) sum += static_cast<Acc>(V::sum(r[k]));
    return sum;
}

// One thread's share of a grid-stride sum over n elements with 16-byte loads, LOADS of
// them in flight per thread per iteration (the body of vector_load and single_pass).
//  - head: the elements before the first 16-byte boundary (none for a cudaMalloc'd
//    buffer), fewer than one vector; block 0 adds them with scalar loads.
//  - body: vector j covers elements head + j*W .. head + j*W + W-1. In one iteration a
//    thread loads vectors v, v + BLOCK, ..., v + (LOADS-1)*BLOCK (each load instruction
//    of a warp reads 32 consecutive vectors: 512 contiguous bytes), all LOADS loads issued
//    before the first add; the grid then steps by gridDim.x * BLOCK * LOADS vectors.
//    When a full set of LOADS no longer fits, the single remaining partial set is loaded
//    with a bound check per vector (all its loads still issued before the first add):
//    vector_sets_share, LANES = BLOCK, a part a block.
//  - tail: the last (n - head) % W elements, fewer than one vector; block 0 again.
// Preconditions: `in` is aligned to sizeof(T) (any typed allocation is); BLOCK >= 8 so
// block 0 has a thread per head or tail element. Every thread returns (0 if it had no
// work), so a block-wide sum may follow.
template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, bool L2_PREFETCH = false>
__device__ __forceinline__ Acc vector_thread_sum(const T* __restrict__ in, long long n) {
    static_assert(LOADS >= 1, "LOADS: at least one load per iteration");
    using V = Vec16<T>;
    using Vec = typename V::type;
    constexpr unsigned kWidth = V::kWidth;
    static_assert(sizeof(Vec) == 16 && kWidth * sizeof(T) == 16 && BLOCK >= kWidth, "");
    const unsigned tid = threadIdx.x;
    const Split16<T> split = split16(in, n);
    const Acc sum = head_and_tail_sum<T, Acc>(in, n, split);
    return vector_sets_share<T, Acc, BLOCK, LOADS, L2_PREFETCH, false>(
        sum, split.body, split.vectors, tid, blockIdx.x, gridDim.x);
}

}  // namespace rb
