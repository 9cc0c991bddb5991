// The hacked-ELLPACK row product as a device function, shared by hll_kernels.cu and the fused
// CG loops (solver/cuda/fused_cg_impl.cuh); see csr_device.cuh for x_at. The rows of a hack read their
// block column-major (hack_offset[h] + j * hack_size + r); a row stops at its own length.
// A row longer than tail_from continues in the HYB tail (formats/hll.hpp): the row function
// walks it on the same thread (the fused loops); the SpMV kernel has the tail summed in pieces
// beforehand (hll_kernels.cu).
//
// Sorted HLL (SELL-C-sigma, formats/hll.hpp): the arrays are by slot. The SpMV kernel walks
// slots and writes y[slot_row[s]]; the row function, asked for row i by the fused loops, first
// looks up its slot (row_slot[i]) and then walks the slot as any other.
#pragma once

#include "spmv/views.hpp"

namespace cgs::cuda {

// The slot's place among the tail slots (ascending): a binary search, made only by rows longer
// than tail_from.
template <typename T>
__device__ __forceinline__ index_t tail_index(const HllView<T>& A, long long slot) {
  index_t lo = 0, hi = A.tail_count;
  while (lo < hi) {
    const index_t mid = lo + (hi - lo) / 2;
    if (A.tail_rows[mid] < slot)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// Loads of A's arrays: `kStream` marks them evict-first (__ldcs) where A is streamed once per
// product (the SpMV kernel), so that they do not push x out of L2; the fused loops, which may
// keep a small A in L2 across iterations, load them plainly.
template <bool kStream, typename V>
__device__ __forceinline__ V load_entry(const V* p) {
  if constexpr (kStream)
    return __ldcs(p);
  else
    return *p;
}

// The slot's entries in its hack: the first `length` (at most tail_from) of its row.
// kBatch > 1 (the SpMV kernel): the indices and values of kBatch entries are loaded before their
// x gathers, the last batch predicated, so that a thread has a whole short row's loads in flight;
// the products are still summed in the row's order (the same bits as one at a time). On
// gen:powerlaw:2000000: 206 -> 161 us (one at a time -> batches of 4, evict-first); batches of 4
// unpredicated with a remainder loop 169 us, batches of 8 214 us (registers: occupancy 28%);
// BENCHMARKS 12g. The fused loops' row function walks one entry at a time (kBatch = 1).
template <bool kStream = false, int kBatch = 1, typename T, typename XAt>
__device__ __forceinline__ double hack_product(const HllView<T>& A, long long slot, index_t length,
                                               XAt x_at) {
  const long long hack = slot / A.hack_size;
  const offset_t base = A.hack_offset[hack] + (slot - hack * A.hack_size);
  double sum = 0;
  for (index_t j = 0; j < length; j += kBatch) {
    index_t col[kBatch];
    T value[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const offset_t at = base + (offset_t)(j + u) * A.hack_size;
      if (kBatch == 1 || j + u < length) {
        col[u] = load_entry<kStream>(&A.col_idx[at]);
        value[u] = load_entry<kStream>(&A.values[at]);
      }
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u)
      if (kBatch == 1 || j + u < length) sum += double(value[u]) * double(x_at(col[u]));
  }
  return sum;
}

template <typename T, typename XAt>
__device__ __forceinline__ double row_product(const HllView<T>& A, long long row, XAt x_at) {
  const long long slot = A.row_slot ? (long long)A.row_slot[row] : row;
  const index_t length = A.row_length[slot];
  double sum = hack_product(A, slot, length < A.tail_from ? length : A.tail_from, x_at);
  if (length > A.tail_from) {
    const index_t t = tail_index(A, slot);
    for (index_t k = A.tail_ptr[t]; k < A.tail_ptr[t + 1]; ++k)
      sum += double(A.tail_values[k]) * double(x_at(A.tail_col_idx[k]));
  }
  return sum;
}

}  // namespace cgs::cuda
