// Mutant (deliberately wrong): relaunch partials written only by block 0.
// An extra mutant (issue #12): a bug learners really write.
//
// Bug: the block's total is stored by "the first thread", tested with the global thread
//   index (blockIdx.x * BLOCK + threadIdx.x == 0) where the block-local one
//   (threadIdx.x == 0) was meant. Only block 0 has a global thread 0, so only
//   out[0] is written; the other blocks' slots keep whatever the partials buffer held,
//   and the next pass sums that.
// Correct: if (threadIdx.x == 0) out[blockIdx.x] = total.
// Exposed by: --finish relaunch with 2 or more blocks in the first pass (n > BLOCK with
//   --grid per-thread=1), any dtype. The result is block 0's total plus leftovers of
//   unwritten memory: never written by this run, so right only by a coincidence no
//   harness can rule out entirely (a leftover NaN fails outright). One block (n <= BLOCK)
//   is correct.
#include "finishes.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void partials_from_block0(const T* in, Acc* out, long long n) {
    const long long thread = mutant::first_index<BLOCK>();
    const Acc total = rb::block_sum<Acc, BLOCK>(mutant::thread_sum<T, Acc, BLOCK>(in, n));
    if (thread == 0) out[blockIdx.x] = total;  // BUG: should test threadIdx.x == 0
}
