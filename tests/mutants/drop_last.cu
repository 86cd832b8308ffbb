// Mutant (deliberately wrong): a dropped last element. Issue #12, required bug 1.
//
// Bug: the grid-stride loop stops at `last = n - 1` with `<`, so in[n - 1] is never
//   added. It mixes up the index of the last element (n - 1, which goes with <=) and the
//   number of elements (n, which goes with <).
// Correct: `i < n` (or `i <= n - 1`); mutant::thread_sum in finishes.cuh is the loop.
// Exposed by: every n >= 1 (n = 1 sums nothing at all), every dtype, any grid, and both
//   finishes below: the result is short by exactly in[n - 1], a nonzero integer with the
//   harness's exact inputs, so zero tolerance always sees it. Not offered with --finish
//   relaunch: there every later pass would drop its own last partial too, and those
//   misses could happen to cancel.
#include "finishes.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__device__ Acc sum_all_but_last(const T* in, long long n) {
    const long long last = n - 1;
    Acc sum = Acc(0);
    for (long long i = mutant::first_index<BLOCK>(); i < last;  // BUG: should be i < n
         i += mutant::grid_stride<BLOCK>())
        sum += rb::to_acc<Acc>(in[i]);
    return sum;
}

// --finish atomic
template <typename T, typename Acc, unsigned BLOCK>
__global__ void drop_last_atomic(const T* in, Acc* out, long long n) {
    mutant::add_block_total<Acc, BLOCK>(out, sum_all_but_last<T, Acc, BLOCK>(in, n));
}

// --finish single
template <typename T, typename Acc, unsigned BLOCK>
__global__ void drop_last_single(const T* in, Acc* out, long long n, Acc* workspace,
                                 unsigned int* ticket) {
    mutant::finish_single<Acc, BLOCK>(out, sum_all_but_last<T, Acc, BLOCK>(in, n),
                                      workspace, ticket);
}
