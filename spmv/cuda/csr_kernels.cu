// CSR kernels: scalar (a thread per row) and vector (a group of G lanes per row, G = 2..32;
// G = 32 is the classic warp per row). The "adaptive" variant picks G from the mean row length:
// rows of 2-4 entries (water networks) would leave most of a 32-lane warp idle. (Measured on
// H200, the scalar kernel still beats every group size on such short rows: consecutive rows are
// contiguous, so a warp's loads share cache lines; see spmv/cuda/cuda_backends.cu.)
#include <algorithm>
#include <string>
#include <tuple>

#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/cuda/fused_spmv.cuh"

namespace cgs::cuda {
namespace {

template <typename T>
__global__ void csr_scalar_kernel(CsrView<T> A, const T* __restrict__ x, T* __restrict__ y) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < A.rows;
       row += stride) {
    y[row] = T(row_product(A, row, [x](index_t col) { return x[col]; }));
  }
}

// Rows are handed out in warp-sized batches (32 / G rows per warp), so the loop condition is
// the same for all lanes of a warp and the full-mask shuffles are always legal.
template <typename T, int G>
__global__ void csr_vector_kernel(index_t rows, const index_t* __restrict__ row_ptr,
                                  const index_t* __restrict__ col_idx, const T* __restrict__ values,
                                  const T* __restrict__ x, T* __restrict__ y) {
  constexpr int kRowsPerWarp = 32 / G;
  const int lane = threadIdx.x % G;
  const int group_in_warp = (threadIdx.x % 32) / G;
  const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const long long warps = (long long)gridDim.x * blockDim.x / 32;
  for (long long first = warp * kRowsPerWarp; first < rows; first += warps * kRowsPerWarp) {
    const long long row = first + group_in_warp;
    double sum = 0;
    if (row < rows) {
      const index_t end = row_ptr[row + 1];
      for (index_t k = row_ptr[row] + lane; k < end; k += G) {
        sum += product(values[k], x[col_idx[k]]);
      }
    }
#pragma unroll
    for (int offset = G / 2; offset > 0; offset /= 2) {
      sum += __shfl_down_sync(kFullMask, sum, offset, G);
    }
    if (lane == 0 && row < rows) y[row] = T(sum);
  }
}

// Lanes per row for the adaptive kernel: the smallest power of two that covers the mean row
// length, between 2 and 32, so a typical row takes one pass of its group.
int lanes_for_mean_length(double mean_length) {
  int lanes = 2;
  while (lanes < 32 && lanes < mean_length) lanes *= 2;
  return lanes;
}

template <typename T>
class CsrCudaBackend final : public CudaBackendBase<T>, public FusedSpmvSource<T> {
 public:
  // lanes_per_row == 1: scalar kernel; 2..32: vector kernel with that group size.
  CsrCudaBackend(const CsrMatrix<T>& A, int lanes_per_row, const std::string& kernel_label,
                 LaunchShape shape)
      : CudaBackendBase<T>(Format::csr, A, "csr/cuda-" + kernel_label),
        lanes_(lanes_per_row),
        shape_(shape),
        row_ptr_(A.row_ptr, "CSR row pointers"),
        col_idx_(A.col_idx, "CSR column indices"),
        values_(A.values, "CSR values") {
    this->warm_up();
  }

  void apply(const T* x, T* y) override {
    const index_t rows = this->rows();
    if (rows == 0) return;
    const long long threads = (long long)rows * lanes_;
    const int grid = grid_for(threads, shape_.block_size, shape_.user_blocks);
    const auto args = std::make_tuple(rows, row_ptr_.data(), col_idx_.data(), values_.data(), x, y);
    switch (lanes_) {
      case 1: launch(csr_scalar_kernel<T>, grid, std::make_tuple(view(), x, y)); break;
      case 2: launch(csr_vector_kernel<T, 2>, grid, args); break;
      case 4: launch(csr_vector_kernel<T, 4>, grid, args); break;
      case 8: launch(csr_vector_kernel<T, 8>, grid, args); break;
      case 16: launch(csr_vector_kernel<T, 16>, grid, args); break;
      default: launch(csr_vector_kernel<T, 32>, grid, args); break;
    }
  }

  bool device_view(MatrixView<T>& out) const override {
    if (lanes_ != 1) return false;  // a group of lanes per row: no row function
    out.format = Format::csr;
    out.csr = view();
    return true;
  }

 private:
  CsrView<T> view() const {
    return {this->rows(), row_ptr_.data(), col_idx_.data(), values_.data()};
  }

  template <typename Kernel, typename Args>
  void launch(Kernel kernel, int grid, const Args& args) {
    std::apply([&](auto... a) { kernel<<<grid, shape_.block_size, 0, stream()>>>(a...); }, args);
    CGS_CHECK_LAUNCH();
  }

  int lanes_;
  LaunchShape shape_;
  DeviceArray<index_t> row_ptr_, col_idx_;
  DeviceArray<T> values_;
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_csr_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options) {
  const std::string& kernel = options.kernel;
  const LaunchShape shape = LaunchShape::from(options);
  if (kernel == "scalar") return std::make_unique<CsrCudaBackend<T>>(A, 1, "scalar", shape);
  if (kernel == "vector") return std::make_unique<CsrCudaBackend<T>>(A, 32, "vector", shape);
  for (int lanes : {2, 4, 8, 16, 32}) {
    if (kernel == "vector" + std::to_string(lanes)) {
      return std::make_unique<CsrCudaBackend<T>>(A, lanes, kernel, shape);
    }
  }
  if (kernel == "stream" || kernel == "stream4" || kernel == "stream8")
    return make_csr_stream_backend(A, options);
  if (kernel == "adaptive") {
    const double mean = A.rows > 0 ? double(A.nnz()) / A.rows : 0.0;
    const int lanes = lanes_for_mean_length(mean);
    return std::make_unique<CsrCudaBackend<T>>(A, lanes, "adaptive" + std::to_string(lanes), shape);
  }
  throw InputError(
      "unknown CSR GPU kernel '" + kernel +
      "' (expected adaptive, scalar, stream, stream4, stream8, vector, vector2, vector4, vector8, "
      "vector16, vector32 or cusparse)");
}

template std::unique_ptr<SpmvBackend<float>> make_csr_cuda_backend(const CsrMatrix<float>&,
                                                                   const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_csr_cuda_backend(const CsrMatrix<double>&,
                                                                    const BackendOptions&);

}  // namespace cgs::cuda
