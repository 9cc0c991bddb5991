// A CSR matrix in device memory (own or lent arrays) and cuSPARSE's SpGEMM with pattern reuse, the
// side-by-side alternative to the project's Galerkin kernels (galerkin_gpu.cuh), with the host
// helpers that put its rows in the host's column order. Included by amg_gpu.cu only (its kernels
// and helpers live in an unnamed namespace there).
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/amg_gpu_common.cuh"
#include "solver/precond/program_spec.hpp"  // CsrArrays
#include "spmv/cuda/cusparse_api.hpp"

namespace cgs::precond::amg {
namespace {

constexpr cusparseOperation_t kPlain = CUSPARSE_OPERATION_NON_TRANSPOSE;
constexpr cusparseSpGEMMAlg_t kAlg = CUSPARSE_SPGEMM_DEFAULT;

// A CSR matrix in device memory: its own arrays, or arrays lent by another owner (lend: read in
// place, never written or freed here). Its cuSPARSE descriptor is made on first request only
// (cusparse_descr: the SpGEMM side-by-side), so that the default set-up, on the project's own
// kernels, never loads the cuSPARSE library.
struct DeviceCsr {
  index_t rows = 0, cols = 0;
  std::int64_t nnz = 0;
  DeviceArray<index_t> row_ptr, col_idx;
  DeviceArray<double> values;
  CsrArrays lent;                                // all null unless lend()
  bool present = false;                          // uploaded or lent
  mutable cusparseSpMatDescr_t descr = nullptr;  // cusparse_descr() makes it

  DeviceCsr() = default;
  const index_t* ptr() const { return lent.row_ptr ? lent.row_ptr : row_ptr.data(); }
  const index_t* col() const { return lent.col_idx ? lent.col_idx : col_idx.data(); }
  const double* val() const { return lent.values ? lent.values : values.data(); }
  bool is_lent() const { return lent.values != nullptr; }
  CsrArrays arrays() const { return {ptr(), col(), val(), nnz}; }
  DeviceCsr(const DeviceCsr&) = delete;
  DeviceCsr& operator=(const DeviceCsr&) = delete;
  ~DeviceCsr() {
    if (descr) cuda::cusparse_api().destroy_sp_mat(descr);
  }

  // Pattern and values of M.
  void upload(const CsrMatrix<double>& M, const char* what) {
    rows = M.rows;
    cols = M.cols;
    nnz = std::int64_t(M.col_idx.size());
    row_ptr = DeviceArray<index_t>(M.row_ptr, what);
    col_idx = DeviceArray<index_t>(M.col_idx, what);
    values = DeviceArray<double>(M.values, what);
    arrays_changed();
  }
  // M's shape on arrays another owner keeps on the device with M's pattern (and, at each set-up,
  // its values; cuSPARSE only reads an SpGEMM's inputs).
  void lend(const CsrMatrix<double>& M, const CsrArrays& arrays) {
    const std::int64_t entries = std::int64_t(M.col_idx.size());  // values may stay on the device
    if (!arrays.row_ptr || !arrays.col_idx || !arrays.values || arrays.nnz != entries)
      throw DeviceError(
          "amg GPU set-up: a lent operator without all its arrays, or of another size");
    rows = M.rows;
    cols = M.cols;
    nnz = entries;
    lent = arrays;
    arrays_changed();
  }
  // After new arrays (uploaded, lent, or made on the device): a descriptor made before is stale.
  void arrays_changed() {
    present = true;
    if (descr) cuda::cusparse_api().destroy_sp_mat(descr);
    descr = nullptr;
  }
  // The cuSPARSE descriptor of the arrays here, made on first request.
  cusparseSpMatDescr_t cusparse_descr() const {
    if (descr) return descr;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().create_csr(
        &descr, rows, cols, nnz, const_cast<index_t*>(ptr()), const_cast<index_t*>(col()),
        const_cast<double*>(val()), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    return descr;
  }
  void upload_values(const std::vector<double>& v) {
    if (is_lent()) throw std::logic_error("amg GPU set-up: values uploaded over a lent operator");
    if (std::int64_t(v.size()) != nnz)
      throw DeviceError("amg GPU set-up: new values for a pattern of another size");
    cuda::copy_to_device(values.data(), v.data(), values.bytes());
  }
};

// C = A B by cuSPARSE's SpGEMM with pattern reuse: the constructor runs the symbolic passes
// (work estimation, C's row counts, C's columns); compute() the numbers, as often as A's and B's
// values change on the same patterns. The buffers compute() needs stay with the object.
class ReusedProduct {
 public:
  ReusedProduct(const DeviceCsr& a, const DeviceCsr& b) : a_(a), b_(b) {
    cusparseHandle_t handle = cuda::cuda_context().cusparse();
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_create_descr(&plan_));
    c_.rows = a.rows;
    c_.cols = b.cols;
    c_.row_ptr = DeviceArray<index_t>(std::size_t(a.rows) + 1, "amg R A P row pointers");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().create_csr(
        &c_.descr, c_.rows, c_.cols, 0, c_.row_ptr.data(), nullptr, nullptr, CUSPARSE_INDEX_32I,
        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    std::size_t size1 = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_work_estimation(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size1, nullptr));
    DeviceArray<char> buffer1(size1, "SpGEMM work estimation buffer");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_work_estimation(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size1, buffer1.data()));
    std::size_t size2 = 0, size3 = 0, size4 = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_nnz(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size2, nullptr, &size3, nullptr, &size4, nullptr));
    DeviceArray<char> buffer2(size2, "SpGEMM nnz buffer");
    DeviceArray<char> buffer3(size3, "SpGEMM nnz buffer");
    buffer4_ = DeviceArray<char>(size4, "SpGEMM compute buffer");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_nnz(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size2, buffer2.data(), &size3, buffer3.data(), &size4, buffer4_.data()));
    std::int64_t rows = 0, cols = 0, nnz = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().sp_mat_get_size(c_.descr, &rows, &cols, &nnz));
    c_.nnz = nnz;
    c_.col_idx = DeviceArray<index_t>(std::size_t(nnz), "amg R A P columns");
    c_.values = DeviceArray<double>(std::size_t(nnz), "amg R A P values");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().csr_set_pointers(c_.descr, c_.row_ptr.data(),
                                                             c_.col_idx.data(), c_.values.data()));
    std::size_t size5 = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_copy(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size5, nullptr));
    buffer5_ = DeviceArray<char>(size5, "SpGEMM copy buffer");
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_copy(
        handle, kPlain, kPlain, a.cusparse_descr(), b.cusparse_descr(), c_.descr, kAlg, plan_,
        &size5, buffer5_.data()));
  }
  ReusedProduct(const ReusedProduct&) = delete;
  ReusedProduct& operator=(const ReusedProduct&) = delete;
  ~ReusedProduct() { cuda::cusparse_api().spgemm_destroy_descr(plan_); }

  void compute() {
    const double one = 1, zero = 0;
    CGS_CUSPARSE_CHECK(cuda::cusparse_api().spgemm_reuse_compute(
        cuda::cuda_context().cusparse(), kPlain, kPlain, &one, a_.cusparse_descr(),
        b_.cusparse_descr(), &zero, c_.descr, CUDA_R_64F, kAlg, plan_));
  }
  const DeviceCsr& result() const { return c_; }

 private:
  const DeviceCsr& a_;
  const DeviceCsr& b_;
  cusparseSpGEMMDescr_t plan_ = nullptr;
  DeviceCsr c_;
  DeviceArray<char> buffer4_, buffer5_;
};

// Where each entry of C goes so that every row's columns ascend (the host's R A P has them so,
// and the next level's aggregation walks rows in column order); empty when they already do.
std::vector<std::int64_t> ascending_order(const CsrMatrix<double>& C) {
  bool sorted = true;
  for (index_t i = 0; i < C.rows && sorted; ++i)
    for (index_t k = C.row_ptr[i] + 1; k < C.row_ptr[i + 1]; ++k)
      if (C.col_idx[k - 1] >= C.col_idx[k]) sorted = false;
  if (sorted) return {};
  std::vector<std::int64_t> order(C.col_idx.size());
  std::iota(order.begin(), order.end(), 0);
  for (index_t i = 0; i < C.rows; ++i)
    std::sort(order.begin() + C.row_ptr[i], order.begin() + C.row_ptr[i + 1],
              [&](std::int64_t x, std::int64_t y) { return C.col_idx[x] < C.col_idx[y]; });
  return order;
}

template <typename V>
std::vector<V> permuted(const std::vector<V>& v, const std::vector<std::int64_t>& order) {
  if (order.empty()) return v;
  std::vector<V> out(v.size());
  for (std::size_t k = 0; k < v.size(); ++k) out[k] = v[std::size_t(order[k])];
  return out;
}

}  // namespace
}  // namespace cgs::precond::amg
