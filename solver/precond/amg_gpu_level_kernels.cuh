// A level's numbers on the device (solver/precond/amg_gpu.cu): P smoothed one thread a row in the
// host's order and roundings, R's values scattered from P's, the Lanczos estimate of P's damping
// (its products and fixed-order sums), and the level's own numbers (D_F, Gershgorin's bound, the
// smoothers' scale) with no host pass over its rows. Included by amg_gpu.cu only (its kernels and
// helpers live in an unnamed namespace there).
#pragma once

#include <cstdint>
#include <vector>

#include "solver/precond/amg_gpu_common.cuh"
#include "solver/precond/amg_start.hpp"

namespace cgs::precond::amg {
namespace {

// One thread a row of P, in the host's order (smooth_prolongator in amg_setup.cpp) and with its
// roundings (no fused multiply-adds), so that P agrees with the host's bit for bit: the row set
// to zero, T's entry, then - omega D_F^-1 A_F T through the positions of A's entries in P.
__global__ void smooth_prolongator_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                          const double* a_val, const index_t* position,
                                          const index_t* of, const double* weight,
                                          const double* diagonal, double omega,
                                          const index_t* p_ptr, const index_t* p_col,
                                          double* p_val) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    const index_t begin = p_ptr[i], end = p_ptr[i + 1];
    for (index_t k = begin; k < end; ++k) p_val[k] = 0;
    if (of[i] >= 0) {  // T's entry: the column of row i's aggregate (columns sorted)
      index_t lo = begin, hi = end;
      while (lo < hi) {
        const index_t mid = lo + (hi - lo) / 2;
        if (p_col[mid] < of[i])
          lo = mid + 1;
        else
          hi = mid;
      }
      p_val[lo] = __dadd_rn(p_val[lo], weight[of[i]]);
    }
    const double scale = __ddiv_rn(omega, diagonal[i]);
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const index_t at = position[k];
      if (at < 0) continue;
      const index_t j = a_col[k];
      const double a = j == i ? diagonal[i] : a_val[k];
      p_val[at] = __dsub_rn(p_val[at], __dmul_rn(__dmul_rn(scale, a), weight[of[j]]));
    }
  }
}

// into[to[k]] = from[k]: P's values into R = P^T (to is a permutation, so no two threads write
// one entry).
__global__ void scatter_kernel(std::int64_t n, const double* from, const index_t* to,
                               double* into) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * kBlock + threadIdx.x; k < n;
       k += std::int64_t(gridDim.x) * kBlock)
    into[to[k]] = from[k];
}

// y = S A_F S x with S = diag(scale): A's strong entries, the diagonal D_F, the weak entries
// dropped (spectrum_bounds's EntryFilter), one thread a row in the host's order.
__global__ void filtered_product_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                        const double* a_val, const char* strong,
                                        const double* diagonal, const double* scale,
                                        const double* x, double* y) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    double s = 0;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const index_t j = a_col[k];
      const double a = j == i ? diagonal[i] : strong[k] ? a_val[k] : 0.0;
      s += a * scale[j] * x[j];
    }
    y[i] = scale[i] * s;
  }
}

// Lanczos's vector steps: scale = D_F^-1/2; w -= a v + b v_old; to = from / divisor.
__global__ void inverse_sqrt_kernel(index_t n, const double* d, double* scale) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    scale[i] = 1 / sqrt(d[i]);
}

__global__ void orthogonalize_kernel(index_t n, double a, double b, const double* v,
                                     const double* v_old, double* w) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    w[i] -= a * v[i] + b * v_old[i];
}

// The hashed start vector's entries before normalization (hashed_lanczos_start's, amg_start.hpp).
__global__ void lanczos_start_kernel(index_t n, double* v) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    v[i] = lanczos_start_entry(i);
}

__global__ void divide_kernel(index_t n, const double* from, double divisor, double* to) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    to[i] = from[i] / divisor;
}

// Dot products in a fixed order: kReduceBlocks partial sums (a fixed grid, a tree in each
// block), summed on the host in block order; the same bits at every call.
constexpr int kReduceBlocks = 264;

__global__ void partial_dot_kernel(index_t n, const double* x, const double* y, double* partial) {
  __shared__ double sums[kBlock];
  double s = 0;
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    s += x[i] * y[i];
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

// ---- a level's own numbers on the device (no host pass over its rows, no copy of its diagonals)

// D_F (filtered_diagonal's): a_ii plus the row's weak entries, in the row's order; a_ii alone
// where that sum is not positive.
__global__ void filtered_diagonal_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                         const double* a_val, const char* strong, double* d) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    double a_ii = 0, weak = 0;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      if (a_col[k] == i)
        a_ii += a_val[k];
      else if (!strong[k])
        weak += a_val[k];
    }
    d[i] = a_ii + weak > 0 ? a_ii + weak : a_ii;
  }
}

// Per block, the largest row sum of |diag(scale) M diag(scale)| (spectrum_bounds's Gershgorin
// pass, term by term: (m_ij s_i) s_j), M = A, or with `strong` A_F (the diagonal `diagonal`, the
// weak entries dropped: spectrum_bounds's EntryFilter). The maximum is exact in any order.
__global__ void partial_gershgorin_kernel(index_t n, const index_t* a_ptr, const index_t* a_col,
                                          const double* a_val, const char* strong,
                                          const double* diagonal, const double* scale,
                                          double* partial) {
  __shared__ double largest[kBlock];
  double mine = 0;
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock) {
    double s = 0;
    for (index_t k = a_ptr[i]; k < a_ptr[i + 1]; ++k) {
      const index_t j = a_col[k];
      const double m = !strong ? a_val[k] : j == i ? diagonal[i] : strong[k] ? a_val[k] : 0.0;
      s += fabs(__dmul_rn(__dmul_rn(m, scale[i]), scale[j]));
    }
    mine = fmax(mine, s);
  }
  largest[threadIdx.x] = mine;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half)
      largest[threadIdx.x] = fmax(largest[threadIdx.x], largest[threadIdx.x + half]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = largest[0];
}

// The smoothers' scale factor / d_i (amg.cpp's smoother_scale: D^-1 for Chebyshev, omega D^-1
// for Jacobi), IEEE division as the host's.
__global__ void scaled_inverse_kernel(index_t n, const double* d, double factor, double* out) {
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < n;
       i += index_t(gridDim.x) * kBlock)
    out[i] = __ddiv_rn(factor, d[i]);
}

// to[k] = from[order[k]]: R A P's values in the host's (ascending) column order.
__global__ void gather_kernel(std::int64_t n, const double* from, const std::int64_t* order,
                              double* to) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * kBlock + threadIdx.x; k < n;
       k += std::int64_t(gridDim.x) * kBlock)
    to[k] = from[order[k]];
}

// Lanczos's work vectors on the device (made for each estimate and freed after it: 5 vectors of
// the level's rows would otherwise stay beside the hierarchy).
struct LanczosVectors {
  DeviceArray<double> scale, v, v_old, w, partial;

  explicit LanczosVectors(index_t n)
      : scale(std::size_t(n), "amg Lanczos scale"),
        v(std::size_t(n), "amg Lanczos vector"),
        v_old(std::size_t(n), "amg Lanczos vector"),
        w(std::size_t(n), "amg Lanczos vector"),
        partial(std::size_t(kReduceBlocks), "amg Lanczos partial sums") {}

  double dot(index_t n, const DeviceArray<double>& x, const DeviceArray<double>& y) {
    partial_dot_kernel<<<kReduceBlocks, kBlock, 0, cuda::stream()>>>(n, x.data(), y.data(),
                                                                     partial.data());
    CGS_CHECK_LAUNCH();
    std::vector<double> sums(static_cast<std::size_t>(kReduceBlocks));
    cuda::copy_to_host(sums.data(), partial.data(), partial.bytes());
    double total = 0;
    for (double s : sums) total += s;
    return total;
  }
};

}  // namespace
}  // namespace cgs::precond::amg
