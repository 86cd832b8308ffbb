// Rung one_shot: pingpong's finish over a grid that reads the input once, with no loop.
//
// Changed from pingpong: no grid-stride loop and no bounded grid. The grid has one block
// per tile of BLOCK * LOADS 16-byte vectors; each thread issues its LOADS loads at once,
// adds them pairwise, and the block finishes as pingpong does (shuffle block sum, one
// atomicAdd into `out`, block 0 zeroes `next`). Elements before the first 16-byte
// boundary and after the last whole vector are read one by one by block 0, as in
// vector_load.
// Why faster: it is the shape of the fastest pure read (ceiling.cu's read_one_shot). A
// persistent grid walks the input in lock-step sweeps and ends with every block on its
// last, unevenly finished sweep; here the block scheduler hands each freed slot the next
// tile, so the input streams in order to the end. Over 4 GiB the one-shot read streams at
// 3205 GB/s on the H100 and the grid-stride read at 3140 (docs/tuning.md), a 2% gap that
// is the distance of the persistent rungs from the read at 2^30 and above. The pairwise
// sum of a thread's loads shortens the chain of adds that waits on its last load.
// New cost: one atomicAdd per tile, n / (BLOCK * LOADS * 16 / sizeof(T)) of them (65,536
// for 2^30 float32 with 1024 x 4), spread over the whole read; and a block's start-up
// (index arithmetic, the head and tail test) is paid per tile instead of once per SM.
// Preconditions: as pingpong (BLOCK a multiple of 32, `in` aligned to
// sizeof(T), `out` zero at the launch and `next` another address, launches that share
// the pair in order on one stream, n >= 1, 64-bit indices), plus a grid of at least
// ceil(vectors / (BLOCK * LOADS)) blocks (fewer leave elements unread; the registry's
// rule launches ceil(n / (BLOCK * LOADS * 16 / sizeof(T))), never fewer). Float atomics:
// not deterministic.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, unsigned L2_PREFETCH>
__global__ void __launch_bounds__(BLOCK)
reduce_one_shot(const T* __restrict__ in, Acc* __restrict__ out, long long n,
                Acc* __restrict__ next) {
    static_assert(LOADS >= 1, "LOADS: at least one load per thread");
    using V = rb::Vec16<T>;
    using Vec = typename V::type;
    constexpr unsigned kWidth = V::kWidth;
    static_assert(sizeof(Vec) == 16 && kWidth * sizeof(T) == 16 && BLOCK % 32 == 0, "");
    const unsigned tid = threadIdx.x;
    if (blockIdx.x == 0 && tid == 0) *next = Acc(0);
    const rb::Split16<T> split = rb::split16(in, n);  // head, whole vectors, tail
    const long long vectors = split.vectors;
    const Vec* vin = split.body;

    // The loads are written before any add so that the tile's bytes can be requested before
    // a wait (nvcc 13.0 for sm_90 keeps all of them in flight up to LOADS = 4; for 8 and 16
    // ptxas interleaves loads and adds, keeping 4 or 5 in flight).
    const long long first = static_cast<long long>(blockIdx.x) * (BLOCK * LOADS) + tid;
    Acc part[LOADS];
    if (first + static_cast<long long>(LOADS - 1) * BLOCK < vectors) {
        Vec r[LOADS];
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k)
            r[k] = rb::load16<L2_PREFETCH != 0>(vin + first + k * BLOCK);
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k) part[k] = static_cast<Acc>(V::sum(r[k]));
    } else {  // the last tile, partly past the end
#pragma unroll
        for (unsigned k = 0; k < LOADS; ++k)
            part[k] = first + k * BLOCK < vectors
                          ? static_cast<Acc>(V::sum(rb::load16<L2_PREFETCH != 0>(vin + first + k * BLOCK)))
                          : Acc(0);
    }
#pragma unroll
    for (unsigned step = 1; step < LOADS; step *= 2) {
#pragma unroll
        for (unsigned k = 0; k + step < LOADS; k += 2 * step) part[k] += part[k + step];
    }
    Acc sum = part[0] + rb::head_and_tail_sum<T, Acc>(in, n, split);

    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (tid == 0) atomicAdd(out, sum);
}
