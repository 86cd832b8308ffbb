// Shuffle lab (not a rung): run one real warp shuffle and keep what every thread got, so
// `reducebench shfl` can set the hardware next to the model in reducebench/shfl/model.py.
//
// One block of exactly --threads threads. Thread t holds in[t]; each thread whose lane is
// in `mask` executes the shuffle chosen by `op` (0 __shfl_sync with operand = srcLane,
// 1 __shfl_up_sync and 2 __shfl_down_sync with operand = delta, 3 __shfl_xor_sync with
// operand = laneMask), with the given width; a thread whose lane is outside the mask skips
// it, as the mask promises, and writes back its value untouched. `op` is the same for the
// whole block, so every lane named in the mask reaches the same shuffle call.
//
// Threads past the block's end do not exist: a full-mask shuffle in a partial warp reads
// them as inactive lanes, which is what the lab shows (the result there is undefined).
#include <cuda_fp16.h>

template <typename T>
__global__ void shfl_lab(const T* __restrict__ in, T* __restrict__ out, int op,
                         unsigned int mask, int operand, int width) {
    const unsigned int t = threadIdx.x;
    const unsigned int lane = t % 32u;
    const T v = in[t];
    T r = v;
    if ((mask >> lane) & 1u) {
        switch (op) {
            case 0: r = __shfl_sync(mask, v, operand, width); break;
            case 1: r = __shfl_up_sync(mask, v, static_cast<unsigned int>(operand), width); break;
            case 2: r = __shfl_down_sync(mask, v, static_cast<unsigned int>(operand), width); break;
            case 3: r = __shfl_xor_sync(mask, v, operand, width); break;
            default: break;
        }
    }
    out[t] = r;
}
