// The hacked-ELLPACK row product as a device function, shared by hll_kernels.cu and the fused
// CG loops (solver/cuda/fused_cg.cu); see csr_device.cuh for x_at. The rows of a hack read their
// block column-major (hack_offset[h] + j * hack_size + r); a row stops at its own length.
#pragma once

#include "spmv/views.hpp"

namespace cgs::cuda {

template <typename T, typename XAt>
__device__ __forceinline__ double row_product(const HllView<T>& A, long long row, XAt x_at) {
  const long long hack = row / A.hack_size;
  const offset_t base = A.hack_offset[hack] + (row - hack * A.hack_size);
  const index_t length = A.row_length[row];
  double sum = 0;
  for (index_t j = 0; j < length; ++j) {
    const offset_t slot = base + (offset_t)j * A.hack_size;
    sum += double(A.values[slot]) * double(x_at(A.col_idx[slot]));
  }
  return sum;
}

}  // namespace cgs::cuda
