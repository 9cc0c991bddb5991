// spectrum_bounds on the GPU (solver/precond/spectrum_gpu.hpp). The loop is spectrum_bounds's
// (solver/precond/spectrum.cpp) step for step; amg_gpu.cu's filtered estimate is the same loop
// on A_F.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "solver/precond/spectrum_gpu.hpp"
#include "spmv/cuda/cuda_common.cuh"

namespace cgs::precond {
namespace {

using cuda::DeviceArray;

constexpr int kBlock = 256;
// Dot products and the Gershgorin maximum in a fixed order: kReduceBlocks partial results (a
// fixed grid, a tree in each block), combined on the host in block order.
constexpr int kReduceBlocks = 264;

int blocks_for(index_t n) {
  return int(std::clamp<std::int64_t>((std::int64_t(n) + kBlock - 1) / kBlock, 1, 1 << 20));
}

#define CGS_ROWS(i, n)                                                           \
  for (index_t i = index_t(blockIdx.x) * kBlock + index_t(threadIdx.x); i < (n); \
       i += index_t(gridDim.x) * kBlock)

// y = S A S x, S = diag(scale), one thread a row in the host's order.
__global__ void scaled_product_kernel(index_t n, const index_t* ptr, const index_t* col,
                                      const double* val, const double* scale, const double* x,
                                      double* y) {
  CGS_ROWS(i, n) {
    double s = 0;
    for (index_t k = ptr[i]; k < ptr[i + 1]; ++k) s += val[k] * scale[col[k]] * x[col[k]];
    y[i] = scale[i] * s;
  }
}

__global__ void orthogonalize_kernel(index_t n, double a, double b, const double* v,
                                     const double* v_old, double* w) {
  CGS_ROWS(i, n) w[i] -= a * v[i] + b * v_old[i];
}

__global__ void start_kernel(index_t n, double* v) { CGS_ROWS(i, n) v[i] = lanczos_start_entry(i); }

__global__ void divide_kernel(index_t n, const double* from, double divisor, double* to) {
  CGS_ROWS(i, n) to[i] = from[i] / divisor;
}

// The block's tree over its threads' values: sum (max_instead false) or maximum.
__device__ double block_reduce(double value, bool max_instead) {
  __shared__ double part[kBlock];
  part[threadIdx.x] = value;
  __syncthreads();
  for (int half = kBlock / 2; half > 0; half /= 2) {
    if (int(threadIdx.x) < half) {
      const double other = part[threadIdx.x + half];
      part[threadIdx.x] = max_instead ? fmax(part[threadIdx.x], other) : part[threadIdx.x] + other;
    }
    __syncthreads();
  }
  return part[0];
}

__global__ void partial_dot_kernel(index_t n, const double* x, const double* y, double* partial) {
  double s = 0;
  CGS_ROWS(i, n) s += x[i] * y[i];
  const double total = block_reduce(s, false);
  if (threadIdx.x == 0) partial[blockIdx.x] = total;
}

// Per block, the largest row sum of |S A S|.
__global__ void partial_gershgorin_kernel(index_t n, const index_t* ptr, const index_t* col,
                                          const double* val, const double* scale, double* partial) {
  double largest = 0;
  CGS_ROWS(i, n) {
    double s = 0;
    for (index_t k = ptr[i]; k < ptr[i + 1]; ++k) s += fabs(val[k]) * scale[i] * scale[col[k]];
    largest = fmax(largest, s);
  }
  const double block_largest = block_reduce(largest, true);
  if (threadIdx.x == 0) partial[blockIdx.x] = block_largest;
}

#undef CGS_ROWS

// An array of A read where the device holds it, or a copy made for the Lanczos.
template <typename E>
struct OnDevice {
  DeviceArray<E> copy;
  const E* data = nullptr;
  OnDevice(const E* lent, const std::vector<E>& host, const char* what) {
    if (!lent) copy = DeviceArray<E>(host, what);
    data = lent ? lent : copy.data();
  }
};

struct DeviceLanczos {
  index_t n;
  OnDevice<index_t> ptr, col;
  OnDevice<double> val;
  DeviceArray<double> scale, v, v_old, w, partial;
  std::vector<double> host_partial = std::vector<double>(kReduceBlocks);

  DeviceLanczos(const CsrMatrix<double>& A, const std::vector<double>& s,
                const CsrArrays& lent)
      : n(A.rows),
        ptr(lent.row_ptr, A.row_ptr, "Lanczos A row pointers"),
        col(lent.col_idx, A.col_idx, "Lanczos A columns"),
        val(lent.values, A.values, "Lanczos A values"),
        scale(s, "Lanczos scale"),
        v(std::size_t(A.rows), "Lanczos vector"),
        v_old(std::size_t(A.rows), "Lanczos vector"),
        w(std::size_t(A.rows), "Lanczos vector"),
        partial(std::size_t(kReduceBlocks), "Lanczos partial sums") {
    CGS_CUDA_CHECK(cudaMemsetAsync(v_old.data(), 0, v_old.bytes(), cuda::stream()));
    start_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, v.data());
    const double norm = std::sqrt(dot(v, v));
    divide_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, v.data(), norm, v.data());
    CGS_CHECK_LAUNCH();
  }

  const std::vector<double>& partials() {
    CGS_CHECK_LAUNCH();
    cuda::copy_to_host(host_partial.data(), partial.data(), partial.bytes());
    return host_partial;
  }
  double dot(const DeviceArray<double>& x, const DeviceArray<double>& y) {
    partial_dot_kernel<<<kReduceBlocks, kBlock, 0, cuda::stream()>>>(n, x.data(), y.data(),
                                                                     partial.data());
    double total = 0;
    for (double p : partials()) total += p;
    return total;
  }
  double gershgorin() {
    partial_gershgorin_kernel<<<kReduceBlocks, kBlock, 0, cuda::stream()>>>(
        n, ptr.data, col.data, val.data, scale.data(), partial.data());
    double largest = 0;
    for (double p : partials()) largest = std::max(largest, p);
    return largest;
  }
  void multiply() {  // w = S A S v
    scaled_product_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(
        n, ptr.data, col.data, val.data, scale.data(), v.data(), w.data());
    CGS_CHECK_LAUNCH();
  }
};

}  // namespace

Interval spectrum_bounds_on_device(const CsrMatrix<double>& A, const std::vector<double>& scale,
                                   int steps, const CsrArrays& on_device) {
  const index_t n = A.rows;
  steps = int(std::min<index_t>(n, steps));
  if (n == 0 || steps <= 0) return spectrum_bounds(A, scale, steps);  // Gershgorin alone
  DeviceLanczos L(A, scale, on_device);
  const double gershgorin = L.gershgorin();
  std::vector<double> alpha, beta;
  double beta_prev = 0;
  for (int j = 0; j < steps; ++j) {  // spectrum_bounds's loop
    L.multiply();
    const double a = L.dot(L.w, L.v);
    orthogonalize_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, a, beta_prev, L.v.data(),
                                                                       L.v_old.data(), L.w.data());
    const double b = std::sqrt(L.dot(L.w, L.w));
    alpha.push_back(a);
    if (j + 1 == steps || b <= 1e-12 * std::abs(a)) break;  // an invariant subspace: exact
    beta.push_back(b);
    std::swap(L.v_old, L.v);
    divide_kernel<<<blocks_for(n), kBlock, 0, cuda::stream()>>>(n, L.w.data(), b, L.v.data());
    CGS_CHECK_LAUNCH();
    beta_prev = b;
  }
  return interval_from_lanczos(alpha, beta, gershgorin);
}

}  // namespace cgs::precond
