// Rung single_pass: one launch, a deterministic sum: the last block to finish adds the
// block partials.
//
// Changed from vector_load: no float atomic on the result. Each block computes its sum
// with the same vectorised grid-stride body (rb::vector_thread_sum) and block sum, and
// thread 0 writes it to workspace[blockIdx.x], makes it visible device-wide with
// __threadfence(), and takes a ticket with atomicAdd(ticket, 1). The block that draws
// the last ticket (gridDim.x - 1) knows every other partial is already in the
// workspace: it reads them (through L2, with __ldcg), sums them in a fixed order, writes
// out[0], and sets the ticket back to 0 for the next launch.
// Why it matters: the speed of vector_load (one pass over the input, no re-launch, no
// zeroing launch before it) with the same bits on every run: the partials depend only on
// the grid, and the last block adds them in index order and tree order whichever block
// it happens to be. The only atomic is the integer ticket, one per block.
// Preconditions: BLOCK a multiple of 32; `in` aligned to sizeof(T); workspace holds
// gridDim.x accumulators; *ticket is 0 at the launch (the kernel leaves it 0 again, so
// launches on one stream may reuse it, but two concurrent launches may not share it).
// Any n >= 1; 64-bit indices.
#include "common.cuh"

template <typename T, typename Acc, unsigned BLOCK, unsigned LOADS, unsigned L2_PREFETCH>
__global__ void reduce_single_pass(const T* __restrict__ in, Acc* __restrict__ out,
                                   long long n, Acc* workspace, unsigned int* ticket) {
    __shared__ bool is_last;
    Acc sum = rb::vector_thread_sum<T, Acc, BLOCK, LOADS, L2_PREFETCH != 0>(in, n);
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) {
        workspace[blockIdx.x] = sum;
        __threadfence();  // the partial is visible to every block before the ticket is
        is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
        if (is_last) __threadfence();  // and the last block sees every earlier partial
    }
    __syncthreads();  // also separates the two block_sum calls (shared warp_totals)
    if (!is_last) return;  // the same for the whole block: no barrier is left behind

    // The last block: every partial is written. Sum them in a fixed order: thread t adds
    // workspace[t], workspace[t + BLOCK], ... then the block tree. The loads of a round
    // are independent and issued together, so the last block waits for one L2 round trip
    // per kFinishLoads * BLOCK partials rather than one per load.
    constexpr unsigned kFinishLoads = 4;
    Acc total = Acc(0);
    for (unsigned base = 0; base < gridDim.x; base += kFinishLoads * BLOCK) {
        Acc part[kFinishLoads];
#pragma unroll
        for (unsigned k = 0; k < kFinishLoads; ++k) {
            const unsigned b = base + k * BLOCK + threadIdx.x;
            part[k] = b < gridDim.x ? __ldcg(workspace + b) : Acc(0);
        }
#pragma unroll
        for (unsigned k = 0; k < kFinishLoads; ++k) total += part[k];
    }
    total = rb::block_sum<Acc, BLOCK>(total);
    if (threadIdx.x == 0) {
        out[0] = total;
        *ticket = 0u;  // every block has drawn its ticket: nothing else touches it now
    }
}
