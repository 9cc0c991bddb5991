// Hacked ELLPACK kernel: a thread per row; the rows of a hack read their block column-major
// (hack_offset[h] + j * hack_size + r), so a warp over one hack loads coalesced, and each hack
// costs only its own width. Each thread stops at its row's length: padding is never read.
#include "formats/convert.hpp"
#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/cuda/hll_device.cuh"
#include "spmv/kernel_registry.hpp"

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
class HllCudaBackend final : public CudaBackendBase<T> {
 public:
  HllCudaBackend(const CsrMatrix<T>& A, index_t hack_size, LaunchShape shape)
      : CudaBackendBase<T>(Format::hll, A, "hll/cuda", hack_size),
        hack_size_(hack_size),
        shape_(shape) {
    host_ = to_hll(A, hack_size);
    hack_offset_ = DeviceArray<offset_t>(host_.hack_offset, "HLL hack offsets");
    hack_width_ = DeviceArray<index_t>(host_.hack_width, "HLL hack widths");
    row_length_ = DeviceArray<index_t>(host_.row_length, "HLL row lengths");
    col_idx_ = DeviceArray<index_t>(host_.col_idx, "HLL column indices");
    values_ = DeviceArray<T>(host_.values, "HLL values");
    host_.col_idx = {};  // set_values() needs the layout and the value slots only
    this->warm_up();
  }

  void apply(const T* x, T* y) override {
    const index_t rows = this->rows();
    if (rows == 0) return;
    const int grid = grid_for(rows, shape_.block_size, shape_.user_blocks);
    hll_kernel<T><<<grid, shape_.block_size, 0, stream()>>>(view(), x, y);
    CGS_CHECK_LAUNCH();
  }

  std::optional<Rows<T>> row_view() const override { return Rows<T>{view(), true, {}}; }
  void set_values(const T* csr_values) override {
    assign_values(host_, csr_values);
    copy_to_device(values_.data(), host_.values.data(), values_.bytes());
  }

 private:
  HllView<T> view() const {
    return {this->rows(),       hack_size_,      hack_offset_.data(), hack_width_.data(),
            row_length_.data(), col_idx_.data(), values_.data()};
  }

  index_t hack_size_;
  LaunchShape shape_;
  HllMatrix<T> host_;  // layout and values on the host, for set_values()
  DeviceArray<offset_t> hack_offset_;
  DeviceArray<index_t> hack_width_, row_length_, col_idx_;
  DeviceArray<T> values_;
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_hll_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options) {
  require_gpu_kernel(Format::hll, options.kernel);
  if (options.hack_size <= 0) throw InputError("HLL hack size must be positive");
  return std::make_unique<HllCudaBackend<T>>(A, options.hack_size, LaunchShape::from(options));
}

template std::unique_ptr<SpmvBackend<float>> make_hll_cuda_backend(const CsrMatrix<float>&,
                                                                   const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_hll_cuda_backend(const CsrMatrix<double>&,
                                                                    const BackendOptions&);

}  // namespace cgs::cuda
