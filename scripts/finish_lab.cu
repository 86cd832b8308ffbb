// The finish lab (scripts/finish_lab.py): what each step of one_shot's finish costs, and
// whether a shorter finish exists. Appended by the script to the expanded text of
// cuda_src/19_one_shot.cu, so common.cuh (rb::) and reduce_one_shot are already in scope.
//
// Every kernel reads its tile exactly as one_shot does (one block per BLOCK * LOADS
// 16-byte vectors, all loads issued before the first add, the loads added pairwise) and
// then stops after a different amount of finish:
//   read          the thread's sum is only compared with a value it never has (nothing
//                 is written): a read with a reduction's adds, the yardstick;
//   warp          + the warp's shuffle sum;
//   block         + the block's shuffle sum (warp sums, shared memory, barrier, warp 0);
//   block_store   + one plain store per block to its own slot (no contention);
//   block_atomic  + one atomicAdd per block to one address: one_shot without its head and
//                 tail and without zeroing the next accumulator;
//   warp_atomic   warp sum + one atomicAdd per warp (no block barrier, 8-32x the atomics);
//   short_block   block sum whose second level shuffles only over the BLOCK/32 warp
//                 totals (3 steps for 256 threads instead of 5) + atomicAdd;
//   smem_atomic   warp sum, each warp's lane 0 adds into one shared accumulator, barrier,
//                 thread 0 atomicAdds it (no second shuffle level);
//   redux         int only: block sum with __reduce_add_sync (one redux.sync per level
//                 instead of 5 shuffles) + atomicAdd.
//
// lab::pieces puts one_shot back together piece by piece over block_atomic, to find which
// of its pieces costs time (PIECES, bits): kGuard the full-tile test with a partial path,
// kSplit rb::split16 (the 16-byte head/body/tail split), kFastSplit the same split in
// unsigned arithmetic with the body pointer rounded up directly, kHeadTail block 0's
// head and tail sum, kNext block 0 zeroing the next accumulator. FAST_SUM 1 replaces
// rb::block_sum by lab::fast_block_sum (redux.sync for int; a second level of only
// log2(BLOCK/32) shuffles). All five pieces with FAST_SUM 0 is one_shot's code.
// Preconditions: n a multiple of the tile (the script's sizes are), `in` 16-byte aligned,
// out holds at least gridDim.x accumulators. Only the time matters; the sums are not
// checked (the accumulators are never zeroed).

namespace lab {

enum Finish : int {
    kRead = 0, kWarp, kBlock, kBlockStore, kBlockAtomic, kWarpAtomic, kShortBlock,
    kSmemAtomic, kRedux
};

// A tile's LOADS 16-byte loads per thread, all issued before any is used (tile_sum and
// dynamic_tiles put their own work between the loads and the adds).
template <typename T, unsigned BLOCK, unsigned LOADS>
__device__ __forceinline__ void load_tile(const T* __restrict__ in, unsigned long long tile,
                                          typename rb::Vec16<T>::type (&r)[LOADS]) {
    using Vec = typename rb::Vec16<T>::type;
    const Vec* vin = reinterpret_cast<const Vec*>(in);
    const long long first = static_cast<long long>(tile) * (BLOCK * LOADS) + threadIdx.x;
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) r[k] = rb::load16<false>(vin + first + k * BLOCK);
}

// The loaded vectors summed, each to Acc, then pairwise across the loads.
template <typename T, typename Acc, unsigned LOADS>
__device__ __forceinline__ Acc add_tile(const typename rb::Vec16<T>::type (&r)[LOADS]) {
    using V = rb::Vec16<T>;
    Acc part[LOADS];
#pragma unroll
    for (unsigned k = 0; k < LOADS; ++k) part[k] = static_cast<Acc>(V::sum(r[k]));
#pragma unroll
    for (unsigned step = 1; step < LOADS; step *= 2) {
#pragma unroll
        for (unsigned k = 0; k + step < LOADS; k += 2 * step) part[k] += part[k + step];
    }
    return part[0];
}

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS>
__device__ __forceinline__ Acc tile_sum(const T* __restrict__ in) {
    typename rb::Vec16<T>::type r[LOADS];
    load_tile<T, BLOCK, LOADS>(in, blockIdx.x, r);
    return add_tile<T, Acc, LOADS>(r);
}

template <typename Acc>
__device__ __forceinline__ void never_written(Acc v, int* sink) {
    if (v == Acc(-7)) *sink = 1;  // inputs are positive: never true, not provably so
}

template <typename Acc, unsigned BLOCK>
__device__ __forceinline__ Acc short_block_sum(Acc v) {
    constexpr unsigned kWarps = BLOCK / rb::kWarpSize;
    v = rb::warp_sum(v);
    if constexpr (kWarps > 1) {
        __shared__ Acc totals[kWarps];
        const unsigned lane = threadIdx.x % rb::kWarpSize, warp = threadIdx.x / rb::kWarpSize;
        if (lane == 0) totals[warp] = v;
        __syncthreads();
        if (warp == 0) {
            v = lane < kWarps ? totals[lane] : Acc(0);
#pragma unroll
            for (unsigned offset = kWarps / 2; offset > 0; offset /= 2)
                v += __shfl_down_sync(rb::kFullMask, v, offset);
        }
    }
    return v;
}

template <unsigned BLOCK>
__device__ __forceinline__ int redux_block_sum(int v) {
    constexpr unsigned kWarps = BLOCK / rb::kWarpSize;
    v = __reduce_add_sync(rb::kFullMask, v);
    if constexpr (kWarps > 1) {
        __shared__ int totals[kWarps];
        const unsigned lane = threadIdx.x % rb::kWarpSize, warp = threadIdx.x / rb::kWarpSize;
        if (lane == 0) totals[warp] = v;
        __syncthreads();
        if (warp == 0) v = __reduce_add_sync(rb::kFullMask, lane < kWarps ? totals[lane] : 0);
    }
    return v;
}

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, int FINISH>
__global__ void __launch_bounds__(BLOCK)
finish_lab(const T* __restrict__ in, Acc* __restrict__ out, long long n, int* sink) {
    __shared__ Acc block_total;
    if constexpr (FINISH == kSmemAtomic) {
        if (threadIdx.x == 0) block_total = Acc(0);
        __syncthreads();  // before the loads: off the path that waits on them
    }
    Acc v = tile_sum<T, Acc, BLOCK, LOADS>(in);
    const unsigned lane = threadIdx.x % rb::kWarpSize;
    if constexpr (FINISH == kRead) {
        never_written(v, sink);
    } else if constexpr (FINISH == kWarp) {
        v = rb::warp_sum(v);
        if (lane == 0) never_written(v, sink);
    } else if constexpr (FINISH == kBlock) {
        v = rb::block_sum<Acc, BLOCK>(v);
        if (threadIdx.x == 0) never_written(v, sink);
    } else if constexpr (FINISH == kBlockStore) {
        v = rb::block_sum<Acc, BLOCK>(v);
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    } else if constexpr (FINISH == kBlockAtomic) {
        v = rb::block_sum<Acc, BLOCK>(v);
        if (threadIdx.x == 0) atomicAdd(out, v);
    } else if constexpr (FINISH == kWarpAtomic) {
        v = rb::warp_sum(v);
        if (lane == 0) atomicAdd(out, v);
    } else if constexpr (FINISH == kShortBlock) {
        v = short_block_sum<Acc, BLOCK>(v);
        if (threadIdx.x == 0) atomicAdd(out, v);
    } else if constexpr (FINISH == kSmemAtomic) {
        v = rb::warp_sum(v);
        if (lane == 0) atomicAdd(&block_total, v);
        __syncthreads();
        if (threadIdx.x == 0) atomicAdd(out, block_total);
    } else if constexpr (FINISH == kRedux) {
        static_assert(sizeof(Acc) == 4 && Acc(1) / Acc(2) == Acc(0), "redux: int only");
        v = redux_block_sum<BLOCK>(v);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }
}

enum Piece : int { kGuard = 1, kSplit = 2, kFastSplit = 4, kHeadTail = 8, kNext = 16 };

template <typename Acc, unsigned BLOCK>
__device__ __forceinline__ Acc fast_block_sum(Acc v) {
    if constexpr (sizeof(Acc) == 4 && Acc(1) / Acc(2) == Acc(0)) {
        return redux_block_sum<BLOCK>(v);
    } else {
        return short_block_sum<Acc, BLOCK>(v);
    }
}

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, int PIECES, int FAST_SUM>
__global__ void __launch_bounds__(BLOCK)
pieces(const T* __restrict__ in, Acc* __restrict__ out, long long n, Acc* __restrict__ next) {
    using V = rb::Vec16<T>;
    using Vec = typename V::type;
    constexpr unsigned kWidth = V::kWidth;
    const unsigned tid = threadIdx.x;
    if constexpr ((PIECES & kNext) != 0) {
        if (blockIdx.x == 0 && tid == 0) *next = Acc(0);
    }
    rb::Split16<T> split{0, n / kWidth, n, reinterpret_cast<const Vec*>(in)};
    if constexpr ((PIECES & kSplit) != 0) split = rb::split16(in, n);
    if constexpr ((PIECES & kFastSplit) != 0) {
        const unsigned long long address = reinterpret_cast<unsigned long long>(in);
        const unsigned long long head_bytes = (0ull - address) & 15ull;
        const unsigned long long count = static_cast<unsigned long long>(n);
        const unsigned long long head = min(head_bytes / sizeof(T), count);
        const unsigned long long vectors = (count - head) / kWidth;
        split = {static_cast<long long>(head), static_cast<long long>(vectors),
                 static_cast<long long>(head + vectors * kWidth),
                 reinterpret_cast<const Vec*>(address + head_bytes)};
    }
    const Vec* vin = split.body;
    const long long first = static_cast<long long>(blockIdx.x) * (BLOCK * LOADS) + tid;
    Acc part[LOADS];
    if ((PIECES & kGuard) == 0 ||
        first + static_cast<long long>(LOADS - 1) * BLOCK < split.vectors) {
        Vec r[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) r[k] = rb::load16<false>(vin + first + k * BLOCK);
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) part[k] = static_cast<Acc>(V::sum(r[k]));
    } else {
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k)
            part[k] = first + k * BLOCK < split.vectors
                          ? static_cast<Acc>(V::sum(rb::load16<false>(vin + first + k * BLOCK)))
                          : Acc(0);
    }
#pragma unroll
    for (unsigned step = 1; step < LOADS; step *= 2) {
#pragma unroll
        for (unsigned k = 0; k + step < LOADS; k += 2 * step) part[k] += part[k + step];
    }
    Acc sum = part[0];
    if constexpr ((PIECES & kHeadTail) != 0) sum += rb::head_and_tail_sum<T, Acc>(in, n, split);
    if constexpr (FAST_SUM != 0) {
        sum = fast_block_sum<Acc, BLOCK>(sum);
    } else {
        sum = rb::block_sum<Acc, BLOCK>(sum);
    }
    if (tid == 0) atomicAdd(out, sum);
}

// A candidate one_shot: the whole-tile test is one 32-bit compare of blockIdx.x with a
// count made from n alone (a 16-byte aligned input's whole tiles), so an aligned input's
// whole tiles load right away; misaligned inputs and the last, partial tile take
// one_shot's checked path, and the first block on it adds the head and the tail.
template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, int FAST_SUM>
__global__ void __launch_bounds__(BLOCK)
one_shot_v2(const T* __restrict__ in, Acc* __restrict__ out, long long n, Acc* __restrict__ next) {
    using V = rb::Vec16<T>;
    using Vec = typename V::type;
    constexpr unsigned long long kTile = static_cast<unsigned long long>(BLOCK) * LOADS * V::kWidth;
    const unsigned tid = threadIdx.x;
    if (blockIdx.x == 0 && tid == 0) *next = Acc(0);
    const bool aligned = (reinterpret_cast<unsigned long long>(in) & 15u) == 0;
    const unsigned long long whole = static_cast<unsigned long long>(n) / kTile;
    const unsigned whole_tiles = whole < 0xffffffffull ? static_cast<unsigned>(whole) : 0xffffffffu;
    const long long first = static_cast<long long>(blockIdx.x) * (BLOCK * LOADS) + tid;
    Acc part[LOADS];
    Acc sum;
    if (aligned && blockIdx.x < whole_tiles) {
        const Vec* vin = reinterpret_cast<const Vec*>(in);
        Vec r[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) r[k] = rb::load16<false>(vin + first + k * BLOCK);
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) part[k] = static_cast<Acc>(V::sum(r[k]));
#pragma unroll
        for (unsigned step = 1; step < LOADS; step *= 2) {
#pragma unroll
            for (unsigned k = 0; k + step < LOADS; k += 2 * step) part[k] += part[k + step];
        }
        sum = part[0];
    } else {
        const rb::Split16<T> split = rb::split16(in, n);
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k)
            part[k] = first + k * BLOCK < split.vectors
                          ? static_cast<Acc>(V::sum(rb::load16<false>(split.body + first + k * BLOCK)))
                          : Acc(0);
#pragma unroll
        for (unsigned step = 1; step < LOADS; step *= 2) {
#pragma unroll
            for (unsigned k = 0; k + step < LOADS; k += 2 * step) part[k] += part[k + step];
        }
        sum = part[0];
        if (blockIdx.x == (aligned ? whole_tiles : 0u)) {
            if (tid < split.head) sum += rb::to_acc<Acc>(in[tid]);
            if (tid < n - split.tail_start) sum += rb::to_acc<Acc>(in[split.tail_start + tid]);
        }
    }
    if constexpr (FAST_SUM != 0) {
        sum = fast_block_sum<Acc, BLOCK>(sum);
    } else {
        sum = rb::block_sum<Acc, BLOCK>(sum);
    }
    if (tid == 0) atomicAdd(out, sum);
}


// dynamic: a persistent grid (as many blocks as fit at once, one wave) whose blocks take
// tiles in order from a counter instead of exiting after one: each block pays the block
// sum and the atomicAdd once, at its end, not once per tile, and a slot never waits for a
// block to exit and the next to start. What it costs instead: one atomicAdd on the counter
// per tile (issued right after the tile's loads, so its latency hides behind theirs) and
// one barrier per tile (the claimed index goes through shared memory). The first tile of
// each block is blockIdx.x, unclaimed; claims start at gridDim.x. Block 0 zeroes
// `next_counter`, the counter of the launch after this one (the pingpong pair).
// Preconditions: as the lab's (n a multiple of the tile); `counter` zero at the launch.
template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS>
__global__ void __launch_bounds__(BLOCK)
dynamic_tiles(const T* __restrict__ in, Acc* __restrict__ out, long long n,
              unsigned* __restrict__ counter, unsigned* __restrict__ next_counter) {
    using V = rb::Vec16<T>;
    constexpr unsigned long long kTile = 1ull * BLOCK * LOADS * V::kWidth;
    __shared__ unsigned claimed[2];
    if (blockIdx.x == 0 && threadIdx.x == 0) *next_counter = 0u;
    const unsigned tiles = static_cast<unsigned>(static_cast<unsigned long long>(n) / kTile);
    Acc sum = Acc(0);
    unsigned tile = blockIdx.x;
    for (unsigned round = 0; tile < tiles; ++round) {
        typename V::type r[LOADS];
        load_tile<T, BLOCK, LOADS>(in, tile, r);
        unsigned ticket = 0;
        if (threadIdx.x == 0) ticket = atomicAdd(counter, 1u);
        sum += add_tile<T, Acc, LOADS>(r);
        // Two slots: slot round & 1 is written again only two rounds later, after every
        // thread has passed the next round's barrier, so after it has been read.
        if (threadIdx.x == 0) claimed[round & 1] = gridDim.x + ticket;
        __syncthreads();
        tile = claimed[round & 1];
    }
    sum = rb::block_sum<Acc, BLOCK, true>(sum);
    if (threadIdx.x == 0) atomicAdd(out, sum);
}

}  // namespace lab
