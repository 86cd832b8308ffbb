// Rung row_cluster: a thread-block cluster per row, its blocks' sums met in distributed
// shared memory.
//
// Changed from row_two_pass: the CLUSTER blocks that share a row are one thread-block
// cluster (Hopper, compute capability 9.0), its size compiled in with __cluster_dims__ so
// that a plain launch of ROWS x CLUSTER blocks makes one cluster of each CLUSTER
// consecutive blocks. Each block sums its part of the row (rb::row_share with parts =
// CLUSTER, part = the block's rank in the cluster; row_block's block sum) and leaves the
// total in its own shared memory; cluster.sync(); warp 0 of the cluster's block 0 reads
// the CLUSTER totals through cluster.map_shared_rank (distributed shared memory: another
// block's shared memory, over the SM-to-SM network), adds them in rank order and writes
// out[row]; a second cluster.sync() keeps every block, and its shared memory, alive
// until then.
// Why faster: one launch, no zeroing, no atomics and no workspace in global memory: the
// row's partial sums never leave the cluster's SMs, and the result has the same bits on
// every run. A cluster's blocks are scheduled together on one GPU processing cluster,
// CLUSTER of them a row, so rows of some hundreds of thousands of elements and more keep
// CLUSTER multiprocessors busy each.
// Preconditions: compute capability 9.0 or later (__cluster_dims__ does not compile for
// older GPUs; the harness skips the rung there); CLUSTER from 1 to 8 (the portable
// cluster size); a grid of exactly ROWS x CLUSTER blocks (a multiple of CLUSTER, as a
// launch of a cluster kernel must be); BLOCK a multiple of 32, at most 1024; LOADS >= 1;
// `in` aligned to sizeof(T). No block returns early: every thread of every block of a
// cluster reaches both cluster barriers. 64-bit indices.
#include "../common.cuh"
#include "row_vectors.cuh"
// Cooperative groups without libcu++ (NVRTC, which compiles these kernels, has no
// <cuda/std/type_traits> on its include path): the header's own type traits instead.
#define _CG_LIMIT_INCLUDED_DEPENDENCIES
#include <cooperative_groups.h>

template <typename T, typename Acc, unsigned BLOCK, unsigned CLUSTER, unsigned LOADS>
__global__ void __cluster_dims__(CLUSTER, 1, 1) __launch_bounds__(BLOCK)
reduce_rows_cluster(const T* __restrict__ in, Acc* __restrict__ out, long long rows,
                    long long cols) {
    static_assert(CLUSTER >= 1 && CLUSTER <= 8, "CLUSTER: 1 to 8 blocks (portable size)");
    namespace cg = cooperative_groups;
    const cg::cluster_group cluster = cg::this_cluster();
    const unsigned rank = cluster.block_rank();  // blockIdx.x % CLUSTER for a 1-D cluster
    const long long row = blockIdx.x / CLUSTER;
    __shared__ Acc block_total;
    Acc sum = Acc(0);
    if (row < rows)  // always, in the planned grid; no return: the barriers need everyone
        sum = rb::row_share<T, Acc, BLOCK, LOADS>(in + row * cols, cols, threadIdx.x, rank,
                                                  CLUSTER);
    sum = rb::block_sum<Acc, BLOCK>(sum);
    if (threadIdx.x == 0) block_total = sum;
    cluster.sync();  // every block's total written and visible to the whole cluster
    if (rank == 0 && threadIdx.x < rb::kWarpSize) {  // warp 0 of block 0: all 32 lanes
        Acc total = threadIdx.x < CLUSTER
                        ? *cluster.map_shared_rank(&block_total, threadIdx.x) : Acc(0);
        total = rb::first_lanes_sum<CLUSTER>(total);
        if (threadIdx.x == 0 && row < rows) out[row] = total;
    }
    cluster.sync();  // no block exits while block 0 may still read its shared memory
}
