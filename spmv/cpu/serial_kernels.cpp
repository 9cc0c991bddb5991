// Serial CPU backends: one call of the row-range kernel over the whole matrix.
// This file is compiled without OpenMP (see spmv/CMakeLists.txt).
#include "formats/convert.hpp"
#include "spmv/cpu/cpu_backend_base.hpp"
#include "spmv/cpu/kernels.hpp"

namespace cgs {
namespace {

template <typename T>
class SerialCsr final : public cpu::BackendBase<T, Device::serial> {
 public:
  explicit SerialCsr(const CsrMatrix<T>& A)
      : cpu::BackendBase<T, Device::serial>(Format::csr, A), A_(A) {}
  void apply(const T* x, T* y) override { cpu::csr_rows(A_, x, y, 0, A_.rows); }
  HostMatrix<T> host_matrix() const override { return cpu::host_view(A_); }

 private:
  CsrMatrix<T> A_;
};

template <typename T>
class SerialCoo final : public cpu::BackendBase<T, Device::serial> {
 public:
  explicit SerialCoo(const CsrMatrix<T>& A)
      : cpu::BackendBase<T, Device::serial>(Format::coo, A), A_(to_coo(A)) {}
  void apply(const T* x, T* y) override { cpu::coo_rows(A_, x, y, 0, A_.rows, 0); }
  HostMatrix<T> host_matrix() const override { return cpu::host_view(A_); }

 private:
  CooMatrix<T> A_;
};

template <typename T>
class SerialEll final : public cpu::BackendBase<T, Device::serial> {
 public:
  explicit SerialEll(const CsrMatrix<T>& A)
      : cpu::BackendBase<T, Device::serial>(Format::ell, A), A_(to_ell(A)) {}
  void apply(const T* x, T* y) override { cpu::ell_rows(A_, x, y, 0, A_.rows); }
  HostMatrix<T> host_matrix() const override { return cpu::host_view(A_); }

 private:
  EllMatrix<T> A_;
};

template <typename T>
class SerialHll final : public cpu::BackendBase<T, Device::serial> {
 public:
  SerialHll(const CsrMatrix<T>& A, index_t hack_size)
      : cpu::BackendBase<T, Device::serial>(Format::hll, A, hack_size), A_(to_hll(A, hack_size)) {}
  void apply(const T* x, T* y) override { cpu::hll_hacks(A_, x, y, 0, A_.hacks()); }
  HostMatrix<T> host_matrix() const override { return cpu::host_view(A_); }

 private:
  HllMatrix<T> A_;
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_serial_backend(const CsrMatrix<T>& A,
                                                    const BackendOptions& options) {
  switch (options.format) {
    case Format::csr: return std::make_unique<SerialCsr<T>>(A);
    case Format::coo: return std::make_unique<SerialCoo<T>>(A);
    case Format::ell: return std::make_unique<SerialEll<T>>(A);
    case Format::hll: return std::make_unique<SerialHll<T>>(A, options.hack_size);
  }
  throw InputError("unknown format");
}

template std::unique_ptr<SpmvBackend<float>> make_serial_backend(const CsrMatrix<float>&,
                                                                 const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_serial_backend(const CsrMatrix<double>&,
                                                                  const BackendOptions&);

}  // namespace cgs
