// Mutant (deliberately wrong): a double-counted element. Issue #12, required bug 3.
//
// Bug: the input is folded in half, each thread adding in[i] + in[n - 1 - i]. To cover
//   an odd n the number of pairs is rounded up, (n + 1) / 2, but the extra "pair" is the
//   middle element paired with itself: in[(n - 1) / 2] is added twice.
// Correct: n / 2 pairs, plus the middle element once when n is odd (or skip the second
//   term where n - 1 - i == i).
// Exposed by: odd n only (for even n every pair is two distinct elements), any dtype, any
//   grid. The result is over by exactly in[(n - 1) / 2], a nonzero integer with exact
//   inputs; n = 1 returns twice the only element. Atomic finish only: under relaunch each
//   later pass would double its own middle partial (when its count is odd), and those
//   additions could cancel.
#include "finishes.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void double_middle(const T* in, Acc* out, long long n) {
    const long long pairs = (n + 1) / 2;  // BUG: the odd middle pairs with itself
    Acc sum = Acc(0);
    for (long long i = mutant::first_index<BLOCK>(); i < pairs;
         i += mutant::grid_stride<BLOCK>())
        sum += rb::to_acc<Acc>(in[i]) + rb::to_acc<Acc>(in[n - 1 - i]);
    mutant::add_block_total<Acc, BLOCK>(out, sum);
}
