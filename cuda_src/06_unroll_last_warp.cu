// Rung unroll_last_warp: the last six tree steps done by one warp, without block barriers.
//
// Changed from first_add: the shared-memory loop stops when 64 partial sums remain.
// From there only warp 0 works, and its steps (offsets 32, 16, 8, 4, 2, 1) are written
// out one by one with __syncwarp() in place of __syncthreads().
// Why faster: when 32 or fewer threads are active, a __syncthreads() makes the whole
// block wait and the loop costs a compare and branch per step; a warp barrier is far
// cheaper, and the unrolled steps leave no loop overhead.
// Why __syncwarp: the classic version relied on the 32 lanes of a warp running in
// lockstep and only declared the array volatile. From Volta on, lanes of a warp are
// scheduled independently and may drift apart, so one lane could overwrite its slot
// before its neighbour has read the old value (or read a slot before it is written):
// a data race. Here each step reads the neighbour's slot into a register, waits at
// __syncwarp() until every lane has read, writes its own slot, and waits again until
// every write is visible. All 32 lanes of warp 0 take part in every step (lanes past
// the useful ones compute sums nobody reads), as the full-warp barrier requires.
// Preconditions: BLOCK a power of two from 64 to 1024 (the first warp step reads slots
// 32..63); 2*BLOCK elements per block, the block partials are reduced by a re-launch;
// any n >= 1; 64-bit indices.
#include "common.cuh"

// One step of the last warp: add the slot `offset` places on, then publish the sum.
template <typename Acc>
__device__ __forceinline__ Acc warp_step(Acc* partial, unsigned tid, unsigned offset, Acc v) {
    v += partial[tid + offset];  // read the neighbour's slot ...
    __syncwarp();                // ... every lane has read before anyone writes
    partial[tid] = v;
    __syncwarp();                // ... every write is visible before the next read
    return v;
}

template <typename T, typename Acc, unsigned BLOCK>
__global__ void reduce_unroll_last_warp(const T* __restrict__ in, Acc* __restrict__ out,
                                        long long n) {
    static_assert(BLOCK >= 64, "the last-warp steps read slots 32..63");
    __shared__ Acc partial[BLOCK];
    const unsigned tid = threadIdx.x;
    const long long i = static_cast<long long>(blockIdx.x) * (2 * BLOCK) + tid;
    Acc v = i < n ? rb::to_acc<Acc>(in[i]) : Acc(0);
    if (i + BLOCK < n) v += rb::to_acc<Acc>(in[i + BLOCK]);
    partial[tid] = v;
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 32; stride /= 2) {
        if (tid < stride) partial[tid] = v = v + partial[tid + stride];
        __syncthreads();
    }
    if (tid < 32) {
        v = warp_step(partial, tid, 32, v);
        v = warp_step(partial, tid, 16, v);
        v = warp_step(partial, tid, 8, v);
        v = warp_step(partial, tid, 4, v);
        v = warp_step(partial, tid, 2, v);
        v = warp_step(partial, tid, 1, v);
        if (tid == 0) out[blockIdx.x] = v;
    }
}
