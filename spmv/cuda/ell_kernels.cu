// ELLPACK kernel: a thread per row over the column-major layout. Consecutive threads read
// consecutive slots (j * rows + row), so every load of a warp is coalesced; each thread stops at
// its row's real length, so the padding of short rows is never read, unless there is almost
// none and no row is empty (full_width): then every row runs to the width without reading its
// length (2D Poisson 3000^2: 12,000 padded slots of 45M, and 4 bytes a row less to read).
#include <algorithm>

#include "formats/convert.hpp"
#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/cuda/ell_device.cuh"
#include "spmv/kernel_registry.hpp"

namespace cgs::cuda {
namespace {

template <typename T>
__global__ void ell_kernel(EllView<T> A, const T* __restrict__ x, T* __restrict__ y) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < A.rows;
       row += stride) {
    y[row] = T(row_product(A, row, [x](index_t col) { return x[col]; }));
  }
}

template <typename T>
class EllCudaBackend final : public CudaBackendBase<T> {
 public:
  EllCudaBackend(const CsrMatrix<T>& A, LaunchShape shape)
      : CudaBackendBase<T>(Format::ell, A, "ell/cuda"), shape_(shape) {
    host_ = to_ell(A);
    full_width_ = runs_to_full_width(host_) ? host_.width : 0;
    row_length_ = DeviceArray<index_t>(host_.row_length, "ELL row lengths");
    col_idx_ = DeviceArray<index_t>(host_.col_idx, "ELL column indices");
    values_ = DeviceArray<T>(host_.values, "ELL values");
    host_.col_idx = {};  // set_values() needs the lengths and the value slots only
    this->warm_up(shape.warm_up);
  }

  void apply(const T* x, T* y) override {
    const index_t rows = this->rows();
    if (rows == 0) return;
    const int grid = grid_for(rows, shape_.block_size, shape_.user_blocks);
    ell_kernel<T><<<grid, shape_.block_size, 0, stream()>>>(view(), x, y);
    CGS_CHECK_LAUNCH();
  }

  std::optional<Rows<T>> row_view() const override { return Rows<T>{view(), true, {}}; }
  void set_values(const T* csr_values) override {
    assign_values(host_, csr_values);
    copy_to_device(values_.data(), host_.values.data(), values_.bytes());
  }

 private:
  EllView<T> view() const {
    return {this->rows(),       host_.width,     full_width_,
            row_length_.data(), col_idx_.data(), values_.data()};
  }

  // Padding at most 1/kMaxPaddingShare of the entries, and no empty row (whose padding column
  // 0 would make a NaN or Inf in x[0] reach a row that has no entries).
  static bool runs_to_full_width(const EllMatrix<T>& ell) {
    constexpr long long kMaxPaddingShare = 100;
    const long long slots = (long long)ell.width * ell.rows, padding = slots - ell.nnz;
    const bool empty_row =
        std::find(ell.row_length.begin(), ell.row_length.end(), 0) != ell.row_length.end();
    return ell.width > 0 && !empty_row && padding * kMaxPaddingShare <= ell.nnz;
  }

  LaunchShape shape_;
  EllMatrix<T> host_;  // lengths and values on the host, for set_values()
  index_t full_width_ = 0;
  DeviceArray<index_t> row_length_, col_idx_;
  DeviceArray<T> values_;
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_ell_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options) {
  require_gpu_kernel(Format::ell, options.kernel);
  return std::make_unique<EllCudaBackend<T>>(A, LaunchShape::from(options));
}

template std::unique_ptr<SpmvBackend<float>> make_ell_cuda_backend(const CsrMatrix<float>&,
                                                                   const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_ell_cuda_backend(const CsrMatrix<double>&,
                                                                    const BackendOptions&);

}  // namespace cgs::cuda
