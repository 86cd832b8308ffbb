// Mutant (deliberately wrong): a grid-stride loop whose stride leaves out gridDim.x.
// An extra mutant (issue #12): a bug learners really write.
//
// Bug: each thread steps by BLOCK (blockDim.x) instead of gridDim.x * BLOCK. Every block
//   then walks from its own start to the end of the input, so block b adds all elements
//   from b * BLOCK on: element i is counted min(i / BLOCK, gridDim.x - 1) + 1 times.
//   (It also reads gridDim.x times more memory than it should: slow as well as wrong.)
// Correct: i += gridDim.x * BLOCK (mutant::grid_stride).
// Exposed by: any dtype whenever the grid has 2 or more blocks, i.e. n > BLOCK with
//   --grid per-sm=8 (one block is correct: its stride is the grid's). The error is the
//   sum of in[i] * min(i / BLOCK, gridDim.x - 1), a weighted sum over all elements past
//   the first block; 0 only by a coincidence the listed sizes were checked against on
//   the harness's inputs. Atomic finish only.
#include "finishes.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void stride_without_grid(const T* in, Acc* out, long long n) {
    Acc sum = Acc(0);
    for (long long i = mutant::first_index<BLOCK>(); i < n; i += BLOCK)  // BUG: * gridDim.x
        sum += rb::to_acc<Acc>(in[i]);
    mutant::add_block_total<Acc, BLOCK>(out, sum);
}
