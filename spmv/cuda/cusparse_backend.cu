// Reference backends: cuSPARSE's generic cusparseSpMV on CSR, COO and, for HLL, its sliced
// ELLPACK (SELL) format, which has the same layout as our hacks (slice = hack, column-major
// within a slice, every slice hack_size rows high) except that padding slots carry column -1.
#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "formats/convert.hpp"
#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/cuda/cusparse_api.hpp"

namespace cgs::cuda {
namespace {

template <typename T>
constexpr cudaDataType value_type() {
  return sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_64F;
}

// The SELL arrays cuSPARSE wants, from our HLL: 32-bit slice offsets, -1 in padding slots.
template <typename T>
struct SellArrays {
  std::vector<index_t> slice_offsets;
  std::vector<index_t> col_idx;
};

template <typename T>
SellArrays<T> sell_from_hll(const HllMatrix<T>& hll) {
  if (hll.hack_offset.back() > INT_MAX) {
    throw InputError("matrix too large for cuSPARSE's 32-bit sliced ELL offsets");
  }
  SellArrays<T> sell;
  sell.slice_offsets.assign(hll.hack_offset.begin(), hll.hack_offset.end());
  sell.col_idx = hll.col_idx;
  for (index_t hack = 0; hack < hll.hacks(); ++hack) {
    for (index_t r = 0; r < hll.hack_size; ++r) {
      const long long row = (long long)hack * hll.hack_size + r;
      const index_t length = row < hll.rows ? hll.row_length[row] : 0;
      for (index_t j = length; j < hll.hack_width[hack]; ++j) {
        sell.col_idx[hll.hack_offset[hack] + (offset_t)j * hll.hack_size + r] = -1;
      }
    }
  }
  return sell;
}

template <typename T>
class CusparseBackend final : public CudaBackendBase<T> {
 public:
  CusparseBackend(const CsrMatrix<T>& A, Format format, index_t hack_size)
      : CudaBackendBase<T>(format, A, to_string(format) + "/cusparse", hack_size) {
    handle_ = cuda_context().cusparse();
    if (format == Format::ell) throw InputError("cuSPARSE has no plain ELL SpMV; use --format hll");
    if (A.rows == 0 || A.nnz() == 0) return;  // y = 0 needs no library call
    switch (format) {
      case Format::csr: describe_csr(A); break;
      case Format::coo: describe_coo(A); break;
      case Format::hll: describe_sell(A, hack_size); break;
      case Format::ell: break;
    }
    prepare();
  }

  ~CusparseBackend() override {
    // Destroying descriptors cannot fail in a way we could act on here.
    if (vec_x_) (void)lib_.destroy_dn_vec(vec_x_);
    if (vec_y_) (void)lib_.destroy_dn_vec(vec_y_);
    if (matrix_) (void)lib_.destroy_sp_mat(matrix_);
  }

  void apply(const T* x, T* y) override {
    if (this->rows() == 0) return;
    if (!matrix_) {  // no nonzeros
      CGS_CUDA_CHECK(cudaMemsetAsync(y, 0, sizeof(T) * std::size_t(this->rows()), stream()));
      return;
    }
    CGS_CUSPARSE_CHECK(lib_.dn_vec_set_values(vec_x_, const_cast<T*>(x)));
    CGS_CUSPARSE_CHECK(lib_.dn_vec_set_values(vec_y_, y));
    CGS_CUSPARSE_CHECK(lib_.spmv(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, matrix_,
                                    vec_x_, &zero_, vec_y_, value_type<T>(), algorithm_,
                                    buffer_.data()));
  }

 private:
  void describe_csr(const CsrMatrix<T>& A) {
    arrays_i_[0] = DeviceArray<index_t>(A.row_ptr, "cuSPARSE CSR row pointers");
    arrays_i_[1] = DeviceArray<index_t>(A.col_idx, "cuSPARSE CSR column indices");
    values_ = DeviceArray<T>(A.values, "cuSPARSE CSR values");
    CGS_CUSPARSE_CHECK(lib_.create_csr(
        &matrix_, A.rows, A.cols, A.nnz(), arrays_i_[0].data(), arrays_i_[1].data(), values_.data(),
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, value_type<T>()));
    algorithm_ = CUSPARSE_SPMV_CSR_ALG1;
  }

  void describe_coo(const CsrMatrix<T>& A) {
    const CooMatrix<T> coo = to_coo(A);
    arrays_i_[0] = DeviceArray<index_t>(coo.row_idx, "cuSPARSE COO row indices");
    arrays_i_[1] = DeviceArray<index_t>(coo.col_idx, "cuSPARSE COO column indices");
    values_ = DeviceArray<T>(coo.values, "cuSPARSE COO values");
    CGS_CUSPARSE_CHECK(lib_.create_coo(&matrix_, A.rows, A.cols, A.nnz(), arrays_i_[0].data(),
                                         arrays_i_[1].data(), values_.data(), CUSPARSE_INDEX_32I,
                                         CUSPARSE_INDEX_BASE_ZERO, value_type<T>()));
    algorithm_ = CUSPARSE_SPMV_COO_ALG1;
  }

  void describe_sell(const CsrMatrix<T>& A, index_t hack_size) {
    sell_ = to_hll(A, hack_size);
    const HllMatrix<T>& hll = *sell_;
    const SellArrays<T> sell = sell_from_hll(hll);
    arrays_i_[0] = DeviceArray<index_t>(sell.slice_offsets, "cuSPARSE SELL slice offsets");
    arrays_i_[1] = DeviceArray<index_t>(sell.col_idx, "cuSPARSE SELL column indices");
    values_ = DeviceArray<T>(hll.values, "cuSPARSE SELL values");
    CGS_CUSPARSE_CHECK(lib_.create_sliced_ell(
        &matrix_, A.rows, A.cols, A.nnz(), (int64_t)hll.values.size(), hack_size,
        arrays_i_[0].data(), arrays_i_[1].data(), values_.data(), CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, value_type<T>()));
    algorithm_ = CUSPARSE_SPMV_SELL_ALG1;
    sell_->col_idx = {};  // set_values() needs the layout and the value slots only
  }

  std::string no_rows_reason() const override {
    return this->name() + " is a cuSPARSE library call, with no row function for the fused loops";
  }

  // The values array the descriptor points at is rewritten in place (same layout).
  void set_values(const T* csr_values) override {
    if (!matrix_) return;
    if (sell_) {
      assign_values(*sell_, csr_values);
      copy_to_device(values_.data(), sell_->values.data(), values_.bytes());
    } else {
      copy_to_device(values_.data(), csr_values, values_.bytes());  // CSR and COO: CSR order
    }
  }

  // Vector descriptors, the work buffer and (CSR) the analysis, once, on scratch vectors; each
  // apply() only points the descriptors at its own x and y.
  void prepare() {
    DeviceArray<T> x(std::max<std::size_t>(1, std::size_t(this->cols())), "cuSPARSE scratch x");
    DeviceArray<T> y(std::max<std::size_t>(1, std::size_t(this->rows())), "cuSPARSE scratch y");
    CGS_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, x.bytes(), stream()));
    CGS_CUSPARSE_CHECK(lib_.create_dn_vec(&vec_x_, this->cols(), x.data(), value_type<T>()));
    CGS_CUSPARSE_CHECK(lib_.create_dn_vec(&vec_y_, this->rows(), y.data(), value_type<T>()));
    std::size_t buffer_bytes = 0;
    CGS_CUSPARSE_CHECK(lib_.spmv_buffer_size(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_,
                                               matrix_, vec_x_, &zero_, vec_y_, value_type<T>(),
                                               algorithm_, &buffer_bytes));
    buffer_ = DeviceArray<unsigned char>(buffer_bytes, "cuSPARSE SpMV work buffer");
    if (algorithm_ == CUSPARSE_SPMV_CSR_ALG1) {
      CGS_CUSPARSE_CHECK(lib_.spmv_preprocess(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_,
                                                 matrix_, vec_x_, &zero_, vec_y_, value_type<T>(),
                                                 algorithm_, buffer_.data()));
    }
    apply(x.data(), y.data());  // loads cuSPARSE's kernels now, not in the first timed product
    synchronize();              // the scratch vectors go out of scope here
  }

  const CusparseApi& lib_ = cusparse_api();  // first: the destructor calls it
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t matrix_ = nullptr;
  cusparseDnVecDescr_t vec_x_ = nullptr, vec_y_ = nullptr;
  cusparseSpMVAlg_t algorithm_ = CUSPARSE_SPMV_ALG_DEFAULT;
  DeviceArray<index_t> arrays_i_[2];
  DeviceArray<T> values_;
  DeviceArray<unsigned char> buffer_;
  std::optional<HllMatrix<T>> sell_;  // HLL: layout and values on the host, for set_values()
  const T one_ = T(1), zero_ = T(0);
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_cusparse_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options) {
  if (options.format == Format::hll && options.hack_size <= 0) {
    throw InputError("HLL hack size must be positive");
  }
  return std::make_unique<CusparseBackend<T>>(A, options.format, options.hack_size);
}

template std::unique_ptr<SpmvBackend<float>> make_cusparse_backend(const CsrMatrix<float>&,
                                                                   const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_cusparse_backend(const CsrMatrix<double>&,
                                                                    const BackendOptions&);

}  // namespace cgs::cuda
