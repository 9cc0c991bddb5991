// What every CPU backend shares: sizes, name and the bytes model. Each backend adds its matrix
// and apply().
#pragma once

#include "formats/coo.hpp"
#include "formats/ell.hpp"
#include "formats/hll.hpp"
#include "spmv/cpu/cpu_backends.hpp"

namespace cgs::cpu {

// The HostMatrix view of a stored matrix, by format.
template <typename T>
HostMatrix<T> host_view(const CsrMatrix<T>& A) {
  return {.csr = &A};
}
template <typename T>
HostMatrix<T> host_view(const CooMatrix<T>& A) {
  return {.coo = &A};
}
template <typename T>
HostMatrix<T> host_view(const EllMatrix<T>& A) {
  return {.ell = &A};
}
template <typename T>
HostMatrix<T> host_view(const HllMatrix<T>& A) {
  return {.hll = &A};
}

template <typename T, Device kDevice>
class BackendBase : public SpmvBackend<T> {
 public:
  index_t rows() const override { return rows_; }
  index_t cols() const override { return cols_; }
  index_t nnz() const override { return nnz_; }
  Device device() const override { return kDevice; }
  std::string name() const override { return to_string(format_) + "/" + to_string(kDevice); }
  std::size_t min_bytes() const override {
    return min_bytes_model(format_, rows_, cols_, nnz_, sizeof(T), hack_size_);
  }

 protected:
  BackendBase(Format format, const CsrMatrix<T>& A, index_t hack_size = 0)
      : format_(format), rows_(A.rows), cols_(A.cols), nnz_(A.nnz()), hack_size_(hack_size) {}

 private:
  Format format_;
  index_t rows_, cols_, nnz_, hack_size_;
};

}  // namespace cgs::cpu
