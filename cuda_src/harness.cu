// Harness kernels: not rungs, but the tools that make the timings honest.
//
// hold_stream: launched first in every sample, it spins until the host writes 1 into a
// flag in pinned host memory. While it spins, the host enqueues the L2 flush, the start
// event, every launch of the rung and the stop event; then it releases the flag and the
// GPU runs them back to back. Python's and CuPy's launch overhead therefore never sits
// inside the measured interval. A timeout (in globaltimer nanoseconds) keeps a lost
// release from hanging the GPU; it is reported through *timed_out.
//
// flush_l2: reads (never writes) a buffer at least twice the L2 size. Reading evicts the
// input's lines cleanly; a written buffer would leave dirty lines in L2 whose write-back
// would then be charged to the measured kernel.
//
// empty_kernel: measured like a rung, it gives the timing floor of the method.
//
// spin_for: takes a known time (it waits on %globaltimer, in nanoseconds), so the tests
// can check that the method measures what a kernel really takes.

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

extern "C" __global__ void hold_stream(unsigned long long release_flag_address,
                                       unsigned long long timeout_ns, int* timed_out) {
    const volatile int* release = reinterpret_cast<const volatile int*>(release_flag_address);
    const unsigned long long start = global_timer_ns();
    while (*release == 0) {
        if (global_timer_ns() - start > timeout_ns) {
            *timed_out = 1;
            return;
        }
        __nanosleep(256);
    }
}

extern "C" __global__ void flush_l2(const int4* __restrict__ buffer, long long count,
                                    int* sink) {
    int folded = 0;
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < count; i += stride) {
        const int4 v = buffer[i];
        folded ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    // A store the compiler cannot prove dead keeps the loads; it practically never runs.
    if (folded == 0x7ffffffe) *sink = folded;
}

extern "C" __global__ void empty_kernel() {}

extern "C" __global__ void spin_for(unsigned long long duration_ns) {
    const unsigned long long start = global_timer_ns();
    while (global_timer_ns() - start < duration_ns) {
    }
}
