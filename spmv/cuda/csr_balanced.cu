// CSR "balanced" kernel (--kernel balanced): a warp per unit of about equal nonzeros
// (spmv/balanced_units.hpp; the products in csr_balanced.cuh). Unlike stream it is a row
// function in the sense of the fused loops: the same products run inside their passes, so a
// matrix with long rows keeps the persistent/graph loops (no per-iteration launches, the vector
// updates fused into the SpMV sweep).
#include <string>

#include "spmv/balanced_units.hpp"
#include "spmv/cuda/csr_balanced.cuh"
#include "spmv/cuda/cuda_backend_base.cuh"

namespace cgs::cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(kBalancedBlock)
    csr_balanced_kernel(CsrView<T> A, const T* __restrict__ x, T* __restrict__ y) {
  balanced_products(
      A, [x](index_t col) { return x[col]; }, [y](long long row, double sum) { y[row] = T(sum); });
}

template <typename T>
class CsrBalancedBackend final : public CudaBackendBase<T> {
 public:
  CsrBalancedBackend(const CsrMatrix<T>& A, LaunchShape shape)
      : CudaBackendBase<T>(Format::csr, A, "csr/cuda-balanced"),
        shape_(shape),
        row_ptr_(A.row_ptr, "CSR row pointers"),
        col_idx_(A.col_idx, "CSR column indices"),
        values_(A.values, "CSR values") {
    const BalancedUnits units = balanced_units(A.row_ptr, A.rows);
    unit_count_ = units.count();
    start_ = DeviceArray<index_t>(units.start, "balanced unit starts");
    first_row_ = DeviceArray<index_t>(units.first_row, "balanced unit rows");
    partial_ = DeviceArray<double>(std::size_t(unit_count_), "balanced unit partial sums");
    arrivals_ = DeviceArray<unsigned>(std::size_t(unit_count_), "balanced unit arrivals");
    if (arrivals_.bytes() > 0)
      CGS_CUDA_CHECK(cudaMemsetAsync(arrivals_.data(), 0, arrivals_.bytes(), stream()));
    this->warm_up(shape.warm_up);
  }

  void apply(const T* x, T* y) override {
    if (this->rows() == 0) return;
    const int grid = grid_for((long long)unit_count_ * 32, kBalancedBlock, shape_.user_blocks);
    csr_balanced_kernel<T><<<grid, kBalancedBlock, 0, stream()>>>(view(), x, y);
    CGS_CHECK_LAUNCH();
  }

  std::optional<Rows<T>> row_view() const override { return Rows<T>{view(), true, {}}; }
  void set_values(const T* csr_values) override {
    copy_to_device(values_.data(), csr_values, values_.bytes());
  }

 private:
  CsrView<T> view() const {
    CsrUnits units;
    units.count = unit_count_;
    units.start = start_.data();
    units.first_row = first_row_.data();
    units.partial = const_cast<double*>(partial_.data());  // scratch, not the matrix
    units.arrivals = const_cast<unsigned*>(arrivals_.data());
    return {this->rows(), row_ptr_.data(), col_idx_.data(), values_.data(), kBalancedLanes, units};
  }

  LaunchShape shape_;
  DeviceArray<index_t> row_ptr_, col_idx_;
  DeviceArray<T> values_;
  index_t unit_count_ = 0;
  DeviceArray<index_t> start_, first_row_;
  DeviceArray<double> partial_;
  DeviceArray<unsigned> arrivals_;
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_csr_balanced_backend(const CsrMatrix<T>& A,
                                                          const BackendOptions& options) {
  return std::make_unique<CsrBalancedBackend<T>>(A, LaunchShape::from(options));
}

template std::unique_ptr<SpmvBackend<float>> make_csr_balanced_backend(const CsrMatrix<float>&,
                                                                       const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_csr_balanced_backend(const CsrMatrix<double>&,
                                                                        const BackendOptions&);

}  // namespace cgs::cuda
