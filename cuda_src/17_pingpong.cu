// Rung pingpong: vector_load without the zeroing launch: each launch zeroes the
// accumulator that the next launch will add into.
//
// Changed from vector_load: the accumulator is no longer zeroed by a cudaMemsetAsync
// before every launch. The harness keeps two accumulators and alternates them: a launch
// adds its block totals into `out` (zeroed by the launch before it) and, from block 0,
// zeroes `next`, the one the following launch will use. Nothing else in this launch
// touches `next`, so the store cannot race with any atomic.
// Why faster: on the H100 the memset is a separate node on the stream that costs about
// 0.75 us whatever the size (results/logs/memset_cost_probe_caa4c7e.txt), a seventh of the whole
// reduction at 2^20. One store per launch replaces it. Unlike single_pass, no block
// waits for a ticket, so there is no serial tail either.
// Preconditions: as vector_load (BLOCK a multiple of 32, `in` aligned to sizeof(T), any
// grid and n >= 1, 64-bit indices), plus: `out` is zero at the launch (both accumulators
// are zeroed once when allocated; after that each launch prepares the other one), and
// `out` and `next` are different addresses. Launches that share the pair must run in
// order on one stream. Float atomics: not deterministic, like vector_load.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, unsigned L2_PREFETCH>
__global__ void reduce_pingpong(const T* __restrict__ in, Acc* __restrict__ out,
                                long long n, Acc* __restrict__ next) {
    if (blockIdx.x == 0 && threadIdx.x == 0) *next = Acc(0);
    Acc sum = rb::vector_thread_sum<T, Acc, BLOCK, LOADS, L2_PREFETCH != 0>(in, n);
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) atomicAdd(out, sum);
}
