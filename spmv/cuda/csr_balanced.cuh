// The "balanced" CSR products as a device function, shared by the SpMV kernel
// (csr_balanced.cu) and the fused CG loops (solver/cuda/fused_cg_device.cuh's BalancedRows), so
// the fused loops keep their single sweep (p computed on the fly, x, p.q updated in the same
// pass) on matrices with long rows. A warp per unit (spmv/balanced_units.hpp), grid-stride:
//   - whole rows: the lanes read the unit's nonzeros contiguously (coalesced), park the products
//     in shared memory, then each lane adds up one row of the unit;
//   - a piece of a long row: the warp sums its piece in a fixed order, leaves the sum in
//     partial[], and the warp that completes the row (a counter per row, at its first piece)
//     adds the pieces in piece order and finishes the row; it resets the counter for the next
//     product. No floating-point atomics: results repeat exactly.
// The matrix arrays are read once per product, so they are loaded with the streaming hint
// (evict first, as csr_stream.cu does): the gathered vector entries (two per nonzero in the
// fused pass A, z and the old p) keep L2. body(row, (A x)_row) runs once per row, on one lane. Every thread of the grid must call
// balanced_products (the warps synchronise), with blocks of at most kBalancedBlock threads.
#pragma once

#include "spmv/cuda/row_groups.cuh"
#include "spmv/views.hpp"

namespace cgs::cuda {

inline constexpr int kBalancedBlock = 256;

template <typename Body>
__device__ __forceinline__ void finish_piece(const CsrUnits& U, long long unit, index_t row,
                                             index_t row_begin, index_t row_end, double sum,
                                             Body& body) {
  const long long first = unit - (U.start[unit] - row_begin) / kBalancedUnit;
  const unsigned pieces = unsigned((row_end - row_begin + kBalancedUnit - 1) / kBalancedUnit);
  U.partial[unit] = sum;
  __threadfence();  // the partial is visible before the arrival is counted
  if (atomicAdd(&U.arrivals[first], 1u) + 1 < pieces) return;
  __threadfence();
  double total = 0;
  for (unsigned p = 0; p < pieces; ++p) total += __ldcg(&U.partial[first + p]);
  U.arrivals[first] = 0;
  body((long long)row, total);
}

template <typename T, typename XAt, typename Body>
__device__ __forceinline__ void balanced_products(const CsrView<T>& A, XAt x_at, Body body) {
  __shared__ double staged[kBalancedBlock / 32][kBalancedUnit];
  const CsrUnits& U = A.units;
  const int lane = int(threadIdx.x % 32);
  double* stage = staged[threadIdx.x / 32];
  const long long warps = (long long)gridDim.x * blockDim.x / 32;
  for (long long unit = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32; unit < U.count;
       unit += warps) {
    const index_t begin = U.start[unit], end = U.start[unit + 1];
    const index_t row = U.first_row[unit];
    const index_t row_begin = A.row_ptr[row], row_end = A.row_ptr[row + 1];
    if (row_end - row_begin > kBalancedUnit) {  // a piece of a long row
      double sum = 0;
      for (index_t k = begin + lane; k < end; k += 32)
        sum += double(__ldcs(&A.values[k])) * double(x_at(__ldcs(&A.col_idx[k])));
      sum = group_sum<32>(sum);
      if (lane == 0) finish_piece(U, unit, row, row_begin, row_end, sum, body);
      continue;
    }
    for (index_t k = begin + lane; k < end; k += 32)
      stage[k - begin] = double(__ldcs(&A.values[k])) * double(x_at(__ldcs(&A.col_idx[k])));
    __syncwarp();
    const index_t mine = row + lane;
    if (mine < U.first_row[unit + 1]) {
      double sum = 0;
      for (index_t k = A.row_ptr[mine]; k < A.row_ptr[mine + 1]; ++k) sum += stage[k - begin];
      body((long long)mine, sum);
    }
    __syncwarp();  // the stage is reused by the warp's next unit
  }
}

}  // namespace cgs::cuda
