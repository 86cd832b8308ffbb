// Correct plumbing shared by the mutants, so that each mutant file holds exactly one bug:
// the per-thread grid-stride sum, and the two finishes that every mutant reuses as they
// are. (The ticket mutants write the middle of their single-pass finish out, since that
// is where their bug is.) The planted kernels of tests/fixtures/kernels/outside_buffers.cu
// are built on the same plumbing. rb::to_acc and rb::block_sum come from reducebench's
// common.cuh.
#pragma once
#include "common.cuh"

namespace mutant {

// The first thread's index, and the distance between one thread's elements, of a
// grid-stride loop: both 64-bit, so any n up to 2^63 is walked without overflow.
template <unsigned BLOCK>
__device__ __forceinline__ long long first_index() {
    return static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x;
}
template <unsigned BLOCK>
__device__ __forceinline__ long long grid_stride() {
    return static_cast<long long>(gridDim.x) * BLOCK;
}

// This thread's share of in[0, n): a grid-stride loop, each element converted to Acc
// before it is added (half types are summed in float).
template <typename T, typename Acc, unsigned BLOCK>
__device__ Acc thread_sum(const T* in, long long n) {
    Acc sum = Acc(0);
    for (long long i = first_index<BLOCK>(); i < n; i += grid_stride<BLOCK>())
        sum += rb::to_acc<Acc>(in[i]);
    return sum;
}

// --finish atomic: the block's total, added once per block into the zeroed out[0].
// Call from every thread of the block.
template <typename Acc, unsigned BLOCK>
__device__ void add_block_total(Acc* out, Acc sum) {
    const Acc total = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) atomicAdd(out, total);
}

// The two halves of --finish single around its "last block" test, apart so that the
// ticket mutants can write that test and the reset after it out in full, where their bug
// is. Thread 0 only: the block leaves its total in workspace[blockIdx.x] and draws a
// ticket, the number of blocks that drew one before it (atomicAdd returns the count
// before its own add).
template <typename Acc>
__device__ unsigned draw_ticket(Acc total, Acc* workspace, unsigned int* ticket) {
    workspace[blockIdx.x] = total;
    __threadfence();  // the total is visible to every block before the ticket counts it
    return atomicAdd(ticket, 1u);
}

// Thread 0 of the last block only: every block's total, summed into out[0].
template <typename Acc>
__device__ void sum_totals(Acc* out, const Acc* workspace) {
    __threadfence();
    const volatile Acc* totals = workspace;  // written by other blocks: no stale cache
    Acc all = Acc(0);
    for (unsigned b = 0; b < gridDim.x; ++b) all += totals[b];
    *out = all;
}

// --finish single: the block that draws the last ticket sums the totals, writes out[0]
// and puts the ticket back to 0 for the next launch. Call from every thread of the block.
template <typename Acc, unsigned BLOCK>
__device__ void finish_single(Acc* out, Acc sum, Acc* workspace, unsigned int* ticket) {
    const Acc total = rb::block_sum<Acc, BLOCK>(sum);
    __shared__ bool last;
    if (threadIdx.x == 0) last = draw_ticket(total, workspace, ticket) == gridDim.x - 1;
    __syncthreads();
    if (last && threadIdx.x == 0) {
        sum_totals(out, workspace);
        *ticket = 0;
    }
}

}  // namespace mutant
