// Shared by the row rungs from row_vec_group on: one thread's share of one row, read
// with 16-byte loads (rb::Vec16, rb::split16 and rb::load16 of common.cuh, the pieces of
// the 1-D vector rungs). row_vec_group's file says why; every later row rung reads its
// rows through row_share (row_vec_block and row_split through block_row_share, which
// reads a row on 16-byte boundaries at both ends with a plain loop of whole vectors), so
// they differ only in who shares a row and how the sharers' sums meet.
#pragma once
#include "../common.cuh"

namespace rb {

// The share of one row that thread `lane` of part `part` sums, in the accumulator type.
//  - The row starts at `row` (aligned to sizeof(T), not necessarily to 16 bytes) and
//    holds `cols` elements: split16 gives its head (the elements before its first
//    16-byte boundary, fewer than one vector), its whole vectors, and its tail (the
//    elements after the last whole vector, fewer than one vector). A row of a row-major
//    array starts 16-byte aligned only if COLS x sizeof(T) is a multiple of 16 (and
//    the array is); any other row has a head, a tail, or both.
//  - LANES threads share each part (lane 0 .. LANES-1) and `parts` parts share the row
//    (part 0 .. parts-1): a group of lanes, a block (LANES = BLOCK), or several blocks.
//  - Body: the row's vectors in sets of LANES x LOADS; set s belongs to part s % parts,
//    and in it lane l loads vectors l, l + LANES, ..., l + (LOADS-1) x LANES of the set:
//    consecutive lanes read consecutive 16 bytes, and all LOADS loads are issued before
//    the first add. A part steps from its set to its next one, parts sets on. When a full
//    set no longer fits, the one partial set left is loaded with a bound check per
//    vector (its loads, too, all issued before the first add): it is the lane's last.
//  - Head and tail: part 0's lanes, one element each (a loop where LANES is below the
//    vector width: for LANES = 1 one thread reads them all).
//  - L2_PREFETCH: the body's loads ask L2 for the surrounding 256 bytes (rb::load16, as the
//    1-D vector rungs' l2_prefetch parameter), which the fastest same-shape reads use too.
//    EVICT_FIRST: they carry the evict-first (streaming) hint (rb::load16 says why).
// Every thread returns (0 if it had nothing to read), so a shuffle or block sum may follow.
template <typename T, typename Acc, unsigned LANES, unsigned LOADS, bool L2_PREFETCH = false,
          bool EVICT_FIRST = false>
__device__ __forceinline__ Acc row_share(const T* __restrict__ row, long long cols,
                                         unsigned lane, unsigned part, unsigned parts) {
    static_assert(LANES >= 1 && LOADS >= 1, "LANES, LOADS: at least one");
    using V = Vec16<T>;
    using Vec = typename V::type;
    static_assert(sizeof(Vec) == 16 && V::kWidth * sizeof(T) == 16, "");
    const Split16<T> split = split16(row, cols);
    Acc sum = Acc(0);
    if (part == 0) {
        for (long long c = lane; c < split.head; c += LANES) sum += to_acc<Acc>(row[c]);
        for (long long c = split.tail_start + lane; c < cols; c += LANES)
            sum += to_acc<Acc>(row[c]);
    }
    return vector_sets_share<T, Acc, LANES, LOADS, L2_PREFETCH, EVICT_FIRST>(
        sum, split.body, split.vectors, lane, part, parts);
}

// The share of a row of `vectors` whole 16-byte vectors at `body` (16-byte aligned) that
// thread `lane` of part `part` sums: row_share's body alone, with no head or tail code
// ahead of its loads. With that code ahead of them, row_vec_block read 512 x 4096 float32
// in 6.18 us on the H200 where a kernel of a loop of loads alone took 5.92 (Triton 5.95;
// results/h200/rows_wide_probe_8b88afb.csv, its vb_ldg kernel). The loop is row_share's
// (whole sets unchecked, then one checked partial set), not a loop checking every load:
// that one keeps LOADS loads in flight and no more, and a block alone on a long row
// waits longer (one row of 2^24 floats by one block of 512 on the H200: 1022 us against
// 843; docs/rows.md, "Vector loads").
template <typename T, typename Acc, unsigned LANES, unsigned LOADS, bool L2_PREFETCH,
          bool EVICT_FIRST>
__device__ __forceinline__ Acc whole_vectors_share(const typename Vec16<T>::type* body,
                                                   long long vectors, unsigned lane,
                                                   unsigned part, unsigned parts) {
    return vector_sets_share<T, Acc, LANES, LOADS, L2_PREFETCH, EVICT_FIRST>(
        Acc(0), body, vectors, lane, part, parts);
}

// row_share, out of line: in a kernel of its own, the whole-vector loop's code is all a
// block of aligned rows fetches on its way to its first load (inlined, whatever the
// branch's hint, ptxas lays this function's code out between the two).
template <typename T, typename Acc, unsigned LANES, unsigned LOADS, bool L2_PREFETCH,
          bool EVICT_FIRST>
__device__ __noinline__ Acc row_share_out_of_line(const T* __restrict__ row, long long cols,
                                                  unsigned lane, unsigned part,
                                                  unsigned parts) {
    return row_share<T, Acc, LANES, LOADS, L2_PREFETCH, EVICT_FIRST>(row, cols, lane, part,
                                                                     parts);
}

// row_share for row_vec_block and row_split (LANES = the block): a row that starts and
// ends on 16-byte boundaries is read by whole_vectors_share alone, any other by
// row_share. row_multi keeps row_share inlined: its narrow rows are a round or two of
// loads, and the call costs it registers and with them occupancy. row_two_pass and
// row_cluster, whose parts are blocks too, keep it as well (not measured with this).
template <typename T, typename Acc, unsigned LANES, unsigned LOADS, bool L2_PREFETCH = false,
          bool EVICT_FIRST = false>
__device__ __forceinline__ Acc block_row_share(const T* __restrict__ row, long long cols,
                                               unsigned lane, unsigned part, unsigned parts) {
    using V = Vec16<T>;
    if ((reinterpret_cast<unsigned long long>(row) & 15u) == 0 && cols % V::kWidth == 0)
        return whole_vectors_share<T, Acc, LANES, LOADS, L2_PREFETCH, EVICT_FIRST>(
            reinterpret_cast<const typename V::type*>(row), cols / V::kWidth, lane, part,
            parts);
    return row_share_out_of_line<T, Acc, LANES, LOADS, L2_PREFETCH, EVICT_FIRST>(
        row, cols, lane, part, parts);
}

}  // namespace rb
