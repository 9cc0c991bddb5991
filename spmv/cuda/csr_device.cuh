// The CSR row product as a device function: the scalar kernel (csr_kernels.cu) and the fused CG
// loops (solver/cuda/fused_cg.cu) both compute a row of A x with it, so the fused loop runs the
// format's own SpMV. x_at(col) returns x[col]: a plain load for the kernel, a value computed on
// the fly (p = z + beta p) in the fused loop.
#pragma once

#include "formats/types.hpp"

namespace cgs::cuda {

template <typename T>
struct CsrView {
  index_t rows;
  const index_t* __restrict__ row_ptr;
  const index_t* __restrict__ col_idx;
  const T* __restrict__ values;
};

// Row `row` of A x, accumulated in double (see product() in cuda_backend_base.cuh).
template <typename T, typename XAt>
__device__ __forceinline__ double row_product(const CsrView<T>& A, long long row, XAt x_at) {
  double sum = 0;
  const index_t end = A.row_ptr[row + 1];
  for (index_t k = A.row_ptr[row]; k < end; ++k) {
    sum += double(A.values[k]) * double(x_at(A.col_idx[k]));
  }
  return sum;
}

}  // namespace cgs::cuda
