// Mutant (deliberately wrong): the single-pass "last block" test is off by one.
// An extra mutant (issue #12): a bug learners really write.
//
// Bug: the last block is taken to be the one for which atomicAdd(ticket, 1) returns
//   gridDim.x. But atomicAdd returns the value *before* the addition, so the blocks get
//   0 .. gridDim.x - 1, none of them is "last", out[0] is never written, and the
//   poisoned result stays. (The ticket is never reset either, as no block gets there.)
// Correct: compare with gridDim.x - 1 (mutant::finish_single).
// Exposed by: the first run already: every n, dtype and grid. It shows the harness
//   poisoning the result before the verified run: over a result buffer that happened to
//   hold the right sum, or 0 where the sum is 0, it would pass. Single finish only.
#include "finishes.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void ticket_off_by_one(const T* in, Acc* out, long long n, Acc* workspace,
                                  unsigned int* ticket) {
    const Acc total = rb::block_sum<Acc, BLOCK>(mutant::thread_sum<T, Acc, BLOCK>(in, n));
    __shared__ bool last;
    // BUG: the ticket is atomicAdd's old value, so the last block draws gridDim.x - 1
    if (threadIdx.x == 0) last = mutant::draw_ticket(total, workspace, ticket) == gridDim.x;
    __syncthreads();
    if (last && threadIdx.x == 0) {
        mutant::sum_totals(out, workspace);
        *ticket = 0;
    }
}
