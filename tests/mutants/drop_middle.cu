// Mutant (deliberately wrong): a dropped middle element. Issue #12, required bug 2.
//
// Bug: "first add during load" over two halves: the upper half starts at
//   half = (n + 1) / 2 (rounded up), and each thread adds in[i] + in[i + half], but the
//   loop runs over i < n / 2 (rounded down). For odd n the lower half is one element
//   longer than the upper one, and its last element, in[(n - 1) / 2], is never read.
// Correct: loop over i < half and add in[i + half] only where i + half < n.
// Exposed by: odd n only (for even n the two halves are equal and the sum is right), any
//   dtype, any grid. The result is short by exactly in[(n - 1) / 2], a nonzero integer
//   with exact inputs. n = 1 drops the only element. Atomic finish only: under relaunch
//   each later pass would drop its own middle partial (when its count is odd), and those
//   misses could cancel.
#include "finishes.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void drop_middle(const T* in, Acc* out, long long n) {
    const long long half = (n + 1) / 2;  // where the upper half starts
    Acc sum = Acc(0);
    for (long long i = mutant::first_index<BLOCK>(); i < n / 2;  // BUG: should be i < half
         i += mutant::grid_stride<BLOCK>())
        sum += rb::to_acc<Acc>(in[i]) + rb::to_acc<Acc>(in[i + half]);
    mutant::add_block_total<Acc, BLOCK>(out, sum);
}
