// Mutant (deliberately wrong): 32-bit indices. Issue #12, required bug 7.
//
// Bug: the loop index and its bound are int: `const int count = n;` (to compare with an
//   int index without a signed/unsigned warning). From n = 2^31 on, count wraps to a
//   negative number (2^31 + 5 becomes -2147483643), the loop never runs, and the kernel
//   adds nothing: out[0] stays 0. (Just below 2^31, i += stride itself overflows, which
//   is undefined behaviour, in practice a negative index and a fault.) The other common
//   form, an int index compared with the 64-bit n, faults rather than sums wrong once i
//   wraps negative, which check reports as an error and not as FAIL; this form is the one
//   that gives a wrong sum.
// Correct: 64-bit indices and bound (long long), as mutant::thread_sum does.
// Exposed by: n >= 2^31 only; correct below 2^31 - gridDim.x * BLOCK. The test runs
//   float32 at n = 2^31 + 5 (8.6 GB): the result 0 is not the sum, which exact inputs
//   never make 0. Any dtype would show it; float32 is the one the test pays for.
//   Atomic finish only.
#include "finishes.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void int32_index(const T* in, Acc* out, long long n) {
    const int count = static_cast<int>(n);  // BUG: n does not fit an int from 2^31 on
    const int stride = gridDim.x * BLOCK;
    Acc sum = Acc(0);
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < count; i += stride)
        sum += rb::to_acc<Acc>(in[i]);
    mutant::add_block_total<Acc, BLOCK>(out, sum);
}
