// Hacked ELLPACK kernel: a thread per row; the rows of a hack read their block column-major
// (hack_offset[h] + j * hack_size + r), so a warp over one hack loads coalesced, and each hack
// costs only its own width. Each thread stops at its row's length: padding is never read.
#include "formats/convert.hpp"
#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/cuda/fused_spmv.cuh"

namespace cgs::cuda {
namespace {

template <typename T>
__global__ void hll_kernel(HllView<T> A, const T* __restrict__ x, T* __restrict__ y) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long row = (long long)blockIdx.x * blockDim.x + threadIdx.x; row < A.rows;
       row += stride) {
    y[row] = T(row_product(A, row, [x](index_t col) { return x[col]; }));
  }
}

template <typename T>
class HllCudaBackend final : public CudaBackendBase<T>, public FusedSpmvSource<T> {
 public:
  HllCudaBackend(const CsrMatrix<T>& A, index_t hack_size, LaunchShape shape)
      : CudaBackendBase<T>(Format::hll, A, "hll/cuda", hack_size),
        hack_size_(hack_size),
        shape_(shape) {
    const HllMatrix<T> hll = to_hll(A, hack_size);
    hack_offset_ = DeviceArray<offset_t>(hll.hack_offset, "HLL hack offsets");
    row_length_ = DeviceArray<index_t>(hll.row_length, "HLL row lengths");
    col_idx_ = DeviceArray<index_t>(hll.col_idx, "HLL column indices");
    values_ = DeviceArray<T>(hll.values, "HLL values");
    this->warm_up();
  }

  void apply(const T* x, T* y) override {
    const index_t rows = this->rows();
    if (rows == 0) return;
    const int grid = grid_for(rows, shape_.block_size, shape_.user_blocks);
    hll_kernel<T><<<grid, shape_.block_size, 0, stream()>>>(view(), x, y);
    CGS_CHECK_LAUNCH();
  }

  bool device_view(MatrixView<T>& out) const override {
    out.format = Format::hll;
    out.hll = view();
    return true;
  }

 private:
  HllView<T> view() const {
    return {this->rows(),       hack_size_,      hack_offset_.data(),
            row_length_.data(), col_idx_.data(), values_.data()};
  }

  index_t hack_size_;
  LaunchShape shape_;
  DeviceArray<offset_t> hack_offset_;
  DeviceArray<index_t> row_length_, col_idx_;
  DeviceArray<T> values_;
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_hll_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options) {
  if (options.kernel != "thread") {
    throw InputError("unknown HLL GPU kernel '" + options.kernel +
                     "' (expected thread or cusparse)");
  }
  if (options.hack_size <= 0) throw InputError("HLL hack size must be positive");
  return std::make_unique<HllCudaBackend<T>>(A, options.hack_size, LaunchShape::from(options));
}

template std::unique_ptr<SpmvBackend<float>> make_hll_cuda_backend(const CsrMatrix<float>&,
                                                                   const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_hll_cuda_backend(const CsrMatrix<double>&,
                                                                    const BackendOptions&);

}  // namespace cgs::cuda
