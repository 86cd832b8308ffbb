// Rung one_shot: pingpong's finish over a grid that reads the input once, with no loop.
//
// Changed from pingpong: no grid-stride loop and no bounded grid. The grid has one block
// per tile of BLOCK * LOADS 16-byte vectors; each thread issues its LOADS loads at once,
// adds them pairwise, and the block finishes as pingpong does (a block sum, one atomicAdd
// into `out`, block 0 zeroes `next`), with a shorter block sum (below). Elements before
// the first 16-byte boundary and after the last whole vector are read one by one by a
// single block, as in vector_load.
// Why faster: it is the shape of the fastest pure read (ceiling.cu's read_one_shot). A
// persistent grid walks the input in lock-step sweeps and ends with every block on its
// last, unevenly finished sweep; here the block scheduler hands each freed slot the next
// tile, so the input streams in order to the end. Over 4 GiB the one-shot read streams at
// 3205 GB/s on the H100 and the grid-stride read at 3140 (docs/tuning.md), a 2% gap that
// is the distance of the persistent rungs from the read at 2^30 and above. The pairwise
// sum of a thread's loads shortens the chain of adds that waits on its last load.
// Every cycle of a block's life counts here: between waves a block slot is free only when
// its block exits, so the test before the loads and the finish after them are paid per
// tile, not once. Hence the short path: a tile of a 16-byte aligned input that lies
// wholly inside n is recognised by one 32-bit compare of blockIdx.x with n's count of
// whole tiles and loads at once; only the last, partial tile, misaligned inputs and any
// blocks past the end (a grid larger than needed) take the checked path (split16, a bound test per load), and the first block on that path
// adds the head and the tail. The block sum is rb::block_sum's short form (redux.sync for int32,
// a shorter second shuffle level). The finish lab (docs/performance.md,
// results/logs/finish_lab_pieces_h100_78e25a2.txt) measured each piece on the H100: a
// checked full-tile test, split and head/tail cost 0.05 to 0.25 us per kernel, redux.sync
// saves 0.1 to 0.2 us for int32.
// New cost: one atomicAdd per tile, n / (BLOCK * LOADS * 16 / sizeof(T)) of them (65,536
// for 2^30 float32 with 1024 x 4), spread over the whole read; and a block's start-up
// (index arithmetic, the head and tail test) is paid per tile instead of once per SM.
// Preconditions: as pingpong (BLOCK a multiple of 32, `in` aligned to
// sizeof(T), `out` zero at the launch and `next` another address, launches that share
// the pair in order on one stream, n >= 1, 64-bit indices), plus a grid of at least
// ceil(n / (BLOCK * LOADS * 16 / sizeof(T))) blocks (fewer leave elements unread; the
// registry's rule launches exactly that many; more read nothing twice), so n is at most
// (2^31 - 1) tiles (gridDim.x's limit; whole_tiles' clamp never decides). Float
// atomics: not deterministic.
#include "common.cuh"

// The sum of a thread's LOADS partial sums as a tree: the chain of adds that waits on
// the last load is log2(LOADS) long, not LOADS.
template <typename Acc, unsigned LOADS>
__device__ __forceinline__ Acc pairwise(Acc (&part)[LOADS]) {
#pragma unroll
    for (unsigned step = 1; step < LOADS; step *= 2) {
#pragma unroll
        for (unsigned k = 0; k + step < LOADS; k += 2 * step) part[k] += part[k + step];
    }
    return part[0];
}

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, unsigned L2_PREFETCH>
__global__ void __launch_bounds__(BLOCK)
reduce_one_shot(const T* __restrict__ in, Acc* __restrict__ out, long long n,
                Acc* __restrict__ next) {
    static_assert(LOADS >= 1, "LOADS: at least one load per thread");
    using V = rb::Vec16<T>;
    using Vec = typename V::type;
    static_assert(sizeof(Vec) == 16 && V::kWidth * sizeof(T) == 16 && BLOCK % 32 == 0, "");
    constexpr unsigned long long kTile = 1ull * BLOCK * LOADS * V::kWidth;  // elements
    const unsigned tid = threadIdx.x;
    if (blockIdx.x == 0 && tid == 0) *next = Acc(0);
    const bool aligned = (reinterpret_cast<unsigned long long>(in) & 15u) == 0;
    const unsigned long long whole = static_cast<unsigned long long>(n) / kTile;
    const unsigned whole_tiles = whole < 0xffffffffull ? static_cast<unsigned>(whole) : 0xffffffffu;
    const long long first = static_cast<long long>(blockIdx.x) * (BLOCK * LOADS) + tid;

    // The loads are written before any add so that the tile's bytes can be requested before
    // a wait (nvcc 13.0 for sm_90 keeps all of them in flight up to LOADS = 4; for 8 and 16
    // ptxas interleaves loads and adds, keeping 4 or 5 in flight).
    Acc part[LOADS];
    Acc sum;
    if (aligned && blockIdx.x < whole_tiles) {  // a whole tile: no test per load
        const Vec* vin = reinterpret_cast<const Vec*>(in);
        Vec r[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k)
            r[k] = rb::load16<L2_PREFETCH != 0>(vin + first + k * BLOCK);
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) part[k] = static_cast<Acc>(V::sum(r[k]));
        sum = pairwise<Acc, LOADS>(part);
    } else {  // the last tile, partly past the end, or any tile of a misaligned input
        const rb::Split16<T> split = rb::split16(in, n);  // head, whole vectors, tail
        // All loads issued before the first add here too: written as one conditional
        // load-and-add per k, ptxas waited for each load before issuing the next, and a
        // tile with two loads per thread paid two DRAM latencies (+0.8 us, float16 2^11).
        Vec r[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) {
            r[k] = Vec{};  // zero bits: a zero of every element type
            if (first + k * BLOCK < split.vectors)
                r[k] = rb::load16<L2_PREFETCH != 0>(split.body + first + k * BLOCK);
        }
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) part[k] = static_cast<Acc>(V::sum(r[k]));
        sum = pairwise<Acc, LOADS>(part);
        // One block adds the head and the tail: the first block on this path (block 0
        // of a misaligned input, the partial tile's block of an aligned one).
        if (blockIdx.x == (aligned ? whole_tiles : 0u))
            sum += rb::head_and_tail_of<T, Acc>(in, n, split);
    }

    sum = rb::block_sum<Acc, BLOCK, true>(sum);
    if (tid == 0) atomicAdd(out, sum);
}
