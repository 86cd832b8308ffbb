// Rung gmem_unroll4 and rung smem_unroll4: four blocks' worth of data per block.
//
// Changed from gmem and from complete_unroll: a block now owns 4*BLOCK consecutive
// elements, and before any tree each thread adds four of them, one from each quarter of
// the span (t, t + BLOCK, t + 2*BLOCK, t + 3*BLOCK), so the grid has a quarter as many
// blocks. gmem_unroll4 writes that sum into its own slot of the scratch copy (slot t,
// whose element it has just read) and runs rung gmem's in-place global-memory tree on
// the first BLOCK slots; smem_unroll4 runs the complete-unrolled shared-memory tree
// (rb::smem_tree_sum in common.cuh, the tree of rung complete_unroll).
// Why faster: four independent loads per thread are in flight at once, which hides
// memory latency far better than one, and the tree and the per-block overhead are paid
// once per 4*BLOCK elements. The gap between the two kernels shows what moving the tree
// from global to shared memory is worth once the loads dominate.
// Preconditions: BLOCK a power of two (32..1024); ceil(n / (4*BLOCK)) blocks, the block
// partials are reduced by a re-launch. Each of the four loads is checked against n, so
// a partial last span is fine; a thread whose first element is past n has nothing to
// add, and the in-place tree touches only the `count` slots below n. gmem_unroll4
// overwrites its input, so it needs T == Acc and a scratch copy. 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_gmem_unroll4(T* __restrict__ in, Acc* __restrict__ out, long long n) {
    static_assert(sizeof(T) == sizeof(Acc), "in place: the scratch holds accumulators");
    const unsigned tid = threadIdx.x;
    const long long base = static_cast<long long>(blockIdx.x) * (4 * BLOCK);
    T* data = in + base;
    // Slots of the first quarter that hold an element (and so receive a sum).
    const unsigned count = n - base < BLOCK ? static_cast<unsigned>(n - base) : BLOCK;
    if (tid < count) {
        const long long i = base + tid;
        T v = in[i];
        if (i + BLOCK < n) v += in[i + BLOCK];
        if (i + 2 * BLOCK < n) v += in[i + 2 * BLOCK];
        if (i + 3 * BLOCK < n) v += in[i + 3 * BLOCK];
        data[tid] = v;  // only this thread reads or writes slot tid here
    }
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride /= 2) {
        if (tid < stride && tid + stride < count) data[tid] += data[tid + stride];
        __syncthreads();
    }
    if (tid == 0) out[blockIdx.x] = data[0];
}

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_smem_unroll4(const T* __restrict__ in, Acc* __restrict__ out,
                                    long long n) {
    const long long i = static_cast<long long>(blockIdx.x) * (4 * BLOCK) + threadIdx.x;
    Acc v = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    if (i + BLOCK < n) v += rb::to_acc<Acc>(in[i + BLOCK]);
    if (i + 2 * BLOCK < n) v += rb::to_acc<Acc>(in[i + 2 * BLOCK]);
    if (i + 3 * BLOCK < n) v += rb::to_acc<Acc>(in[i + 3 * BLOCK]);
    v = rb::smem_tree_sum<Acc, BLOCK>(v);
    if (threadIdx.x == 0) out[blockIdx.x] = v;
}
