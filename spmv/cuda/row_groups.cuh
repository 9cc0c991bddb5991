// Groups of G lanes (G a power of two, 1 to 32) working on one row: the row loops and the
// group reduction shared by the CSR vector kernels and the fused CG loops.
#pragma once

namespace cgs::cuda {

// The sum over the G lanes of a group, in a fixed order (a butterfly: every lane gets the same
// bits). Every lane of the warp must call it.
template <int G>
__device__ __forceinline__ double group_sum(double v) {
#pragma unroll
  for (int offset = G / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset, G);
  return v;
}

// Calls body(row, lane, valid) for every row of [0, n) with G lanes per row, over the whole grid
// (grid-stride). Rows are handed out in warp-sized batches of 32 / G rows, so the loop runs the
// same number of times for every lane of a warp and group_sum inside body is always legal.
template <int G, typename Body>
__device__ __forceinline__ void for_each_row_group(long long n, Body body) {
  constexpr int kRowsPerWarp = 32 / G;
  const long long thread = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long warps = (long long)gridDim.x * blockDim.x / 32;
  const int lane = int(threadIdx.x % G), group = int(threadIdx.x % 32) / G;
  for (long long first = thread / 32 * kRowsPerWarp; first < n; first += warps * kRowsPerWarp) {
    const long long row = first + group;
    body(row, lane, row < n);
  }
}

}  // namespace cgs::cuda
