// The CSR row product as device functions: the scalar and vector kernels (csr_kernels.cu) and the
// fused CG loops (solver/cuda/fused_cg_impl.cuh) all compute a row of A x with them, so the fused loop
// runs the format's own SpMV. x_at(col) returns x[col]: a plain load for the kernel, a value
// computed on the fly (p = z + beta p) in the fused loop.
#pragma once

#include "spmv/cuda/row_groups.cuh"
#include "spmv/views.hpp"

namespace cgs::cuda {

// Row `row` of A x by one thread, accumulated in double (see product() in cuda_backend_base.cuh).
template <typename T, typename XAt>
__device__ __forceinline__ double row_product(const CsrView<T>& A, long long row, XAt x_at) {
  double sum = 0;
  const index_t end = A.row_ptr[row + 1];
  for (index_t k = A.row_ptr[row]; k < end; ++k) {
    sum += double(A.values[k]) * double(x_at(A.col_idx[k]));
  }
  return sum;
}

// Row `row` of A x by a group of G lanes (lane = this thread's place in the group): each lane
// sums every G-th entry, then the group adds its lanes in a fixed order; every lane of the
// group returns the row's sum. All lanes of the group must call it (the shuffles are
// group-wide); a lane whose row is past the end passes valid = false and adds nothing.
template <int G, typename T, typename XAt>
__device__ __forceinline__ double row_product_group(const CsrView<T>& A, long long row, int lane,
                                                    bool valid, XAt x_at) {
  double sum = 0;
  if (valid) {
    const index_t end = A.row_ptr[row + 1];
    for (index_t k = A.row_ptr[row] + lane; k < end; k += G) {
      sum += double(A.values[k]) * double(x_at(A.col_idx[k]));
    }
  }
  return group_sum<G>(sum);
}

}  // namespace cgs::cuda
