// What every CPU backend shares: the stored matrix (one format container), its view for the
// row walkers and the fused loops, new values for the same pattern, sizes, name and the bytes
// model. The serial (serial_kernels.cpp, built without OpenMP) and OpenMP (omp_kernels.cpp)
// backends add only apply().
#pragma once

#include <utility>
#include <vector>

#include "formats/convert.hpp"
#include "spmv/cpu/cpu_backends.hpp"
#include "spmv/cpu/kernels.hpp"

namespace cgs::cpu {

template <typename T>
CsrView<T> view_of(const CsrMatrix<T>& A) {
  return {A.rows, A.row_ptr.data(), A.col_idx.data(), A.values.data(), 1, {}};
}
template <typename T>
EllView<T> view_of(const EllMatrix<T>& A) {
  return {A.rows, A.width, 0, A.row_length.data(), A.col_idx.data(), A.values.data()};
}
template <typename T>
HllView<T> view_of(const HllMatrix<T>& A) {
  return {A.rows,
          A.hack_size,
          A.hack_offset.data(),
          A.hack_width.data(),
          A.row_length.data(),
          A.col_idx.data(),
          A.values.data(),
          A.tail_from,
          index_t(A.tail_rows.size()),
          A.tail_rows.data(),
          A.tail_ptr.data(),
          A.tail_col_idx.data(),
          A.tail_values.data(),
          A.sigma,
          A.sorted() ? A.slot_row.data() : nullptr,
          A.sorted() ? A.row_slot.data() : nullptr};
}

template <typename T, typename Stored>
class CpuBackend : public SpmvBackend<T> {
 public:
  index_t rows() const override { return rows_; }
  index_t cols() const override { return cols_; }
  index_t nnz() const override { return nnz_; }
  Device device() const override { return device_; }
  std::string name() const override { return to_string(format_) + "/" + to_string(device_); }
  std::size_t min_bytes() const override {
    return min_bytes_model(format_, rows_, cols_, nnz_, sizeof(T), hack_size_);
  }
  std::optional<Rows<T>> row_view() const override { return Rows<T>{view(), false, parts_}; }
  void set_values(const T* csr_values) override { assign_values(A_, csr_values); }

 protected:
  // parts: row boundaries of the OpenMP parts (empty on the serial device).
  CpuBackend(Device device, Format format, const CsrMatrix<T>& A, Stored stored,
             std::vector<index_t> parts, index_t hack_size = 0)
      : device_(device),
        format_(format),
        rows_(A.rows),
        cols_(A.cols),
        nnz_(A.nnz()),
        hack_size_(hack_size),
        A_(std::move(stored)),
        parts_(std::move(parts)) {
    if constexpr (std::is_same_v<Stored, CooMatrix<T>>) row_start_ = A.row_ptr;  // same order
  }

  RowView<T> view() const {
    if constexpr (std::is_same_v<Stored, CooMatrix<T>>) {
      return CooView<T>{A_.rows, row_start_.data(), A_.row_idx.data(), A_.col_idx.data(),
                        A_.values.data()};
    } else {
      return view_of(A_);
    }
  }
  // Rows [first, last) of y = A x.
  void multiply(const T* x, T* y, index_t first, index_t last) const {
    std::visit([&](const auto& v) { multiply_rows(v, x, y, first, last); }, view());
  }
  const std::vector<index_t>& parts() const { return parts_; }

 private:
  Device device_;
  Format format_;
  index_t rows_, cols_, nnz_, hack_size_;
  Stored A_;
  std::vector<index_t> parts_;
  std::vector<index_t> row_start_;  // COO: each row's first entry (rows + 1)
};

}  // namespace cgs::cpu
