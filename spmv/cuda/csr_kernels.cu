// CSR kernels: scalar (a thread per row) and vector (a group of G lanes per row, G = 2..32;
// G = 32 is the classic warp per row). The "adaptive" variant picks G from the mean row length:
// rows of 2-4 entries (water networks) would leave most of a 32-lane warp idle. (Measured:
// the scalar kernel still beats every group size on such short rows: consecutive rows are
// contiguous, so a warp's loads share cache lines; see solver/plan.cpp.) Both are row functions
// (csr_device.cuh), so the fused CG loops run them too.
#include <algorithm>
#include <string>

#include "spmv/cuda/csr_device.cuh"
#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/kernel_registry.hpp"

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

template <typename T, int G>
__global__ void csr_vector_kernel(CsrView<T> A, const T* __restrict__ x, T* __restrict__ y) {
  for_each_row_group<G>(A.rows, [&](long long row, int lane, bool valid) {
    const double sum =
        row_product_group<G>(A, row, lane, valid, [x](index_t col) { return x[col]; });
    if (lane == 0 && valid) y[row] = T(sum);
  });
}

template <typename T>
class CsrCudaBackend final : public CudaBackendBase<T> {
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
    this->warm_up(shape.warm_up);
  }

  void apply(const T* x, T* y) override {
    const index_t rows = this->rows();
    if (rows == 0) return;
    const int grid = grid_for((long long)rows * lanes_, shape_.block_size, shape_.user_blocks);
    switch (lanes_) {
      case 1: launch(csr_scalar_kernel<T>, grid, x, y); break;
      case 2: launch(csr_vector_kernel<T, 2>, grid, x, y); break;
      case 4: launch(csr_vector_kernel<T, 4>, grid, x, y); break;
      case 8: launch(csr_vector_kernel<T, 8>, grid, x, y); break;
      case 16: launch(csr_vector_kernel<T, 16>, grid, x, y); break;
      default: launch(csr_vector_kernel<T, 32>, grid, x, y); break;
    }
  }

  std::optional<Rows<T>> row_view() const override { return Rows<T>{view(), true, {}}; }
  void set_values(const T* csr_values) override {
    copy_to_device(values_.data(), csr_values, values_.bytes());
  }

 private:
  CsrView<T> view() const {
    return {this->rows(), row_ptr_.data(), col_idx_.data(), values_.data(), lanes_, {}};
  }

  template <typename Kernel>
  void launch(Kernel kernel, int grid, const T* x, T* y) {
    kernel<<<grid, shape_.block_size, 0, stream()>>>(view(), x, y);
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
  const std::string& kernel = require_gpu_kernel(Format::csr, options.kernel).name;
  const LaunchShape shape = LaunchShape::from(options);
  if (kernel == "scalar") return std::make_unique<CsrCudaBackend<T>>(A, 1, "scalar", shape);
  if (kernel == "vector") return std::make_unique<CsrCudaBackend<T>>(A, 32, "vector", shape);
  for (int lanes : {2, 4, 8, 16, 32}) {
    if (kernel == "vector" + std::to_string(lanes)) {
      return std::make_unique<CsrCudaBackend<T>>(A, lanes, kernel, shape);
    }
  }
  if (kernel.rfind("stream", 0) == 0) return make_csr_stream_backend(A, options);
  if (kernel == "balanced") return make_csr_balanced_backend(A, options);
  if (kernel == "adaptive") {
    const double mean = A.rows > 0 ? double(A.nnz()) / A.rows : 0.0;
    const int lanes = csr_lanes(kernel, mean);
    return std::make_unique<CsrCudaBackend<T>>(A, lanes, "adaptive" + std::to_string(lanes), shape);
  }
  throw InputError("the CSR GPU kernel '" + kernel + "' is listed but not built");
}

template std::unique_ptr<SpmvBackend<float>> make_csr_cuda_backend(const CsrMatrix<float>&,
                                                                   const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_csr_cuda_backend(const CsrMatrix<double>&,
                                                                    const BackendOptions&);

}  // namespace cgs::cuda
