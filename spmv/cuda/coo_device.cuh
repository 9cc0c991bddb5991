// The COO row product as a device function, for the fused CG loops (solver/cuda/fused_cg_impl.cuh):
// the entries of a row are the run [row_start[row], row_start[row + 1]) of the row-sorted
// arrays (row_start is built once with the backend; the COO arrays are unchanged and row_idx is
// not read). The COO SpMV kernels (coo_segscan.cu) walk the entries instead.
#pragma once

#include "spmv/views.hpp"

namespace cgs::cuda {

template <typename T, typename XAt>
__device__ __forceinline__ double row_product(const CooView<T>& A, long long row, XAt x_at) {
  double sum = 0;
  const index_t end = A.row_start[row + 1];
  for (index_t k = A.row_start[row]; k < end; ++k) {
    sum += double(A.values[k]) * double(x_at(A.col_idx[k]));
  }
  return sum;
}

}  // namespace cgs::cuda
