// The hacked-ELLPACK row product as a device function, shared by hll_kernels.cu and the fused
// CG loops (solver/cuda/fused_cg.cu); see csr_device.cuh for x_at. The rows of a hack read their
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

// The slot's entries in its hack: the first `length` (at most tail_from) of its row.
template <typename T, typename XAt>
__device__ __forceinline__ double hack_product(const HllView<T>& A, long long slot, index_t length,
                                               XAt x_at) {
  const long long hack = slot / A.hack_size;
  const offset_t base = A.hack_offset[hack] + (slot - hack * A.hack_size);
  double sum = 0;
  for (index_t j = 0; j < length; ++j) {
    const offset_t slot = base + (offset_t)j * A.hack_size;
    sum += double(A.values[slot]) * double(x_at(A.col_idx[slot]));
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
