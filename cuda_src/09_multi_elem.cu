// Rung multi_elem: many elements per thread through a grid-stride loop (Harris's step 7).
//
// Changed from smem_unroll4: the grid no longer grows with n. The harness launches a
// few blocks per multiprocessor (the blocks_per_sm parameter, never more blocks than
// there is work for), and each thread walks the input with a stride of
// 2 * gridDim.x * BLOCK, adding two elements BLOCK apart per iteration into a running
// sum in a register. The block then sums with the complete-unrolled shared-memory tree
// (rb::smem_tree_sum, the tree of rung complete_unroll) and writes one partial.
// Why faster: the tree, the barriers and the partial write happen once per block for
// the whole input instead of once per few hundred elements, and the partials left for
// the re-launch are a few thousand at most, so the second pass is tiny. Each thread
// keeps issuing loads with almost no other work between them (Brent's theorem: do the
// cheap sequential adds per thread, the costly tree once).
// Preconditions: BLOCK a power of two from 64 to 1024; any grid size (the loop covers
// every element whatever gridDim.x is); the block partials are reduced by a re-launch;
// any n >= 1; 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_multi_elem(const T* __restrict__ in, Acc* __restrict__ out,
                                  long long n) {
    const long long stride = static_cast<long long>(gridDim.x) * BLOCK * 2;
    Acc sum = Acc(0);
    for (long long i = static_cast<long long>(blockIdx.x) * (2 * BLOCK) + threadIdx.x; i < n;
         i += stride) {
        sum += rb::to_acc<Acc>(in[i]);
        if (i + BLOCK < n) sum += rb::to_acc<Acc>(in[i + BLOCK]);
    }
    sum = rb::smem_tree_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) out[blockIdx.x] = sum;
}
