// The ELLPACK row product as a device function, shared by ell_kernels.cu and the fused CG loops
// (solver/cuda/fused_cg_impl.cuh); see csr_device.cuh for x_at. The layout is column-major
// (slot j * rows + row), so consecutive rows read consecutive slots; a row stops at its own
// length, so padding is never read, unless full_width says every row runs to the width.
#pragma once

#include "spmv/views.hpp"

namespace cgs::cuda {

template <typename T, typename XAt>
__device__ __forceinline__ double row_product(const EllView<T>& A, long long row, XAt x_at) {
  double sum = 0;
  if (A.full_width > 0) {
    // Nearly no padding: reading it (value 0, the row's own last column) costs less than
    // reading row_length first, and the loads need not wait for it. Same sum, same order.
    for (index_t j = 0; j < A.full_width; ++j) {
      const long long slot = (long long)j * A.rows + row;
      sum += double(A.values[slot]) * double(x_at(A.col_idx[slot]));
    }
    return sum;
  }
  const index_t length = A.row_length[row];
  for (index_t j = 0; j < length; ++j) {
    const long long slot = (long long)j * A.rows + row;
    sum += double(A.values[slot]) * double(x_at(A.col_idx[slot]));
  }
  return sum;
}

}  // namespace cgs::cuda
