// Mutant (deliberately wrong): a single-pass ticket that is never reset. Issue #12,
// required bug 8.
//
// Bug: the last block to arrive sums the workspace and writes out[0], but does not put
//   the ticket back to 0. The harness zeroes the ticket once, before the first launch, so
//   the first launch is right. In the second launch atomicAdd hands out gridDim.x ..
//   2 * gridDim.x - 1, no block ever sees gridDim.x - 1, nobody writes out[0], and the
//   poisoned result stays.
// Correct: the last block writes `*ticket = 0` after reading the workspace
//   (mutant::finish_single), or counts with atomicInc(ticket, gridDim.x - 1), which wraps
//   to 0 by itself.
// Exposed by: the second run in one process only. `check` runs every case twice and
//   verifies both, so every n, dtype and grid fails there; a harness that verified only
//   the first launch would pass it. Single finish only (the others have no ticket).
#include "finishes.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void ticket_not_reset(const T* in, Acc* out, long long n, Acc* workspace,
                                 unsigned int* ticket) {
    const Acc total = rb::block_sum<Acc, BLOCK>(mutant::thread_sum<T, Acc, BLOCK>(in, n));
    __shared__ bool last;
    if (threadIdx.x == 0) last = mutant::draw_ticket(total, workspace, ticket) == gridDim.x - 1;
    __syncthreads();
    if (last && threadIdx.x == 0) {
        mutant::sum_totals(out, workspace);
        // BUG: missing `*ticket = 0;`
    }
}
