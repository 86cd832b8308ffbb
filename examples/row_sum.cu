// A worked example of a user row kernel for `reducebench run --shape --kernel`
// (docs/custom-kernels.md, docs/rows.md).
//
//   reducebench run --shape 4096x4096,2^20x64 --rung row_warp,torch_rows \
//       --kernel examples/row_sum.cu:row_sum_warp4 --grid lanes-per-row=32
//
// What it does: a warp per row, as the row ladder's row_warp, but each lane keeps four
// independent partial sums, so four loads of its row are in flight before it adds any of
// them; then the four are added and five shuffles leave the row's sum in lane 0, which
// writes out[row].
//
// The contract it follows: a template over <T, Acc, BLOCK> (input type, accumulator
// type, threads per block), parameters (const T* in, Acc* out, long long rows,
// long long cols), the input row-major ROWS x COLS, the sum of row r written to out[r]
// (nothing is zeroed before a launch, nothing is added atomically). `--grid
// lanes-per-row=32` tells the harness that 32 lanes share a row: a block of BLOCK threads
// holds BLOCK / 32 rows and the grid is ceil(ROWS / (BLOCK / 32)), so the kernel finds its
// row as blockIdx.x * (BLOCK / 32) + threadIdx.x / 32. Any ROWS and COLS >= 1, 64-bit
// indices. Deterministic: each row is added in one fixed order.

template <typename T, typename Acc, unsigned BLOCK>
__global__ void row_sum_warp4(const T* __restrict__ in, Acc* __restrict__ out,
                              long long rows, long long cols) {
    constexpr unsigned kLanes = 32;
    const unsigned lane = threadIdx.x % kLanes;
    const long long row = static_cast<long long>(blockIdx.x) * (BLOCK / kLanes) +
                          threadIdx.x / kLanes;
    if (row >= rows) return;  // the whole warp: its 32 lanes share the row
    const T* p = in + row * cols;
    Acc s0 = Acc(0), s1 = Acc(0), s2 = Acc(0), s3 = Acc(0);
    long long c = lane;
    for (; c + 3 * kLanes < cols; c += 4 * kLanes) {  // four loads in flight per lane
        s0 += static_cast<Acc>(p[c]);
        s1 += static_cast<Acc>(p[c + kLanes]);
        s2 += static_cast<Acc>(p[c + 2 * kLanes]);
        s3 += static_cast<Acc>(p[c + 3 * kLanes]);
    }
    for (; c < cols; c += kLanes) s0 += static_cast<Acc>(p[c]);  // the last partial round
    Acc sum = (s0 + s1) + (s2 + s3);
    for (int offset = 16; offset > 0; offset /= 2)
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (lane == 0) out[row] = sum;
}
