// Mutant (deliberately wrong): a shared-memory tree with a missing __syncthreads().
// Issue #12, required bug 5.
//
// Bug: each thread stores its sum in partial[tid] and the tree starts at once, without a
//   barrier after the store. At the first step (s = BLOCK / 2) threads 0 .. s - 1 read
//   the slots of the upper half of the block, which other warps write; nothing makes
//   those writes happen first, so the tree may add what the slots held before.
// Correct: __syncthreads() between the store and the tree (and, as here, after each
//   step), or rb::block_sum's warp shuffles.
// Made to show on every run: a race that loses only sometimes cannot be a reliable test.
//   So (1) the slots are cleared to 0 at the start (with a barrier), and (2) the upper
//   half of the block does extra work before it stores its sum: a spin of about 50 us
//   (100000 SM cycles) on clock64(), standing in for a longer loop or a second input.
//   By the time those sums land, the lower half has read zeros, and the block's total is
//   the sum of its lower half only. A real kernel's skew is smaller, which is what makes
//   this bug dangerous: it passes most runs. With BLOCK = 32 the two halves share a warp
//   and the order is not certain; the tests use BLOCK = 256.
// Exposed by: any dtype, any grid, whenever an upper-half thread has elements: the error
//   is minus the sum of the elements that threads BLOCK/2 .. BLOCK-1 of each block read.
//   n = 129 makes that one element (in[128], nonzero), so it must fail; for larger n it
//   is a sum of about n / 2 elements, 0 only by a coincidence the tests checked the
//   inputs against (seeded, so reproducible). Atomic finish only.
#include "finishes.cuh"

constexpr long long kExtraWorkCycles = 100000;

template <typename T, typename Acc, unsigned BLOCK>
__global__ void missing_syncthreads(const T* in, Acc* out, long long n) {
    __shared__ Acc partial[BLOCK];
    const unsigned tid = threadIdx.x;
    partial[tid] = Acc(0);
    __syncthreads();

    const Acc sum = mutant::thread_sum<T, Acc, BLOCK>(in, n);
    if (tid >= BLOCK / 2) {  // the upper half's extra work (see the comment above)
        const long long start = clock64();
        while (clock64() - start < kExtraWorkCycles) {}
    }
    partial[tid] = sum;
    // BUG: no __syncthreads() here, so the first step reads the upper slots too early.
    for (unsigned s = BLOCK / 2; s > 0; s /= 2) {
        if (tid < s) partial[tid] += partial[tid + s];
        __syncthreads();
    }
    if (tid == 0) atomicAdd(out, partial[0]);
}
