// Mutant (deliberately wrong): vector loads without the scalar tail. Issue #12, required
// bug 4.
//
// Bug: the input is read four elements at a time (one aligned 4-element load: 16 bytes
//   for float and int, 32 for double, 8 for the half types) over n / 4 vectors, and the
//   n % 4 elements after the last whole vector are never read.
// Correct: after the vector loop, a scalar grid-stride loop over i = 4 * (n / 4) ... n - 1
//   (as the vector_load rung does).
// Exposed by: n not a multiple of 4, any dtype, any grid. The sizes listed have
//   n % 4 == 1, so the result is short by exactly one element, in[n - 1], a nonzero
//   integer with exact inputs (n % 4 == 2 or 3 drops two or three elements, which could
//   sum to 0). n = 1 reads nothing at all. Atomic finish only.
#include "finishes.cuh"

template <typename T>
struct alignas(4 * sizeof(T)) Four {
    T v[4];
};

template <typename T, typename Acc, unsigned BLOCK>
__global__ void vector_tail(const T* in, Acc* out, long long n) {
    const Four<T>* in4 = reinterpret_cast<const Four<T>*>(in);  // in is 256-byte aligned
    const long long vectors = n / 4;
    Acc sum = Acc(0);
    for (long long v = mutant::first_index<BLOCK>(); v < vectors;
         v += mutant::grid_stride<BLOCK>()) {
        const Four<T> four = in4[v];
        sum += (rb::to_acc<Acc>(four.v[0]) + rb::to_acc<Acc>(four.v[1])) +
               (rb::to_acc<Acc>(four.v[2]) + rb::to_acc<Acc>(four.v[3]));
    }
    // BUG: no loop over the n % 4 elements from 4 * vectors to n - 1.
    mutant::add_block_total<Acc, BLOCK>(out, sum);
}
