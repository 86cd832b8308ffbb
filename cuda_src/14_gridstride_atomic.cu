// Rung gridstride_atomic: a grid-stride loop, a shuffle block sum, one atomicAdd per block.
//
// Changed from shfl: the grid no longer grows with n. A few blocks per multiprocessor
// walk the whole input with a stride of gridDim.x * BLOCK, each thread keeping a running
// sum in a register; then the block sums with shuffles and adds its total to the result
// with one atomicAdd. No second launch: the accumulator is zeroed before the launch.
// Why faster: far fewer blocks (no per-block start-up and tree for every 256 elements),
// many independent loads per thread, and no re-launch over partials.
// Preconditions: BLOCK a multiple of 32; *out zeroed before the launch. Float atomics
// make the result depend on the order blocks finish in: not bit-for-bit deterministic.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_gridstride_atomic(const T* __restrict__ in, Acc* __restrict__ out,
                                         long long n) {
    const long long stride = static_cast<long long>(gridDim.x) * BLOCK;
    Acc sum = Acc(0);
    for (long long i = static_cast<long long>(blockIdx.x) * BLOCK + threadIdx.x; i < n;
         i += stride)
        sum += rb::to_acc<Acc>(in[i]);
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) atomicAdd(out, sum);
}
