// Serial CPU backends: one walk of the format's rows over the whole matrix.
// This file is compiled without OpenMP (see spmv/CMakeLists.txt).
#include "spmv/cpu/cpu_backend.hpp"

namespace cgs {
namespace {

template <typename T, typename Stored>
class SerialBackend final : public cpu::CpuBackend<T, Stored> {
 public:
  SerialBackend(Format format, const CsrMatrix<T>& A, Stored stored, index_t hack_size = 0)
      : cpu::CpuBackend<T, Stored>(Device::serial, format, A, std::move(stored), {}, hack_size) {}
  void apply(const T* x, T* y) override { this->multiply(x, y, 0, this->rows()); }
};

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_serial_backend(const CsrMatrix<T>& A,
                                                    const BackendOptions& options) {
  switch (options.format) {
    case Format::csr: return std::make_unique<SerialBackend<T, CsrMatrix<T>>>(Format::csr, A, A);
    case Format::coo:
      return std::make_unique<SerialBackend<T, CooMatrix<T>>>(Format::coo, A, to_coo(A));
    case Format::ell:
      return std::make_unique<SerialBackend<T, EllMatrix<T>>>(Format::ell, A, to_ell(A));
    case Format::hll:
      return std::make_unique<SerialBackend<T, HllMatrix<T>>>(Format::hll, A, make_hll(A, options),
                                                              options.hack_size);
  }
  throw InputError("unknown format");
}

template std::unique_ptr<SpmvBackend<float>> make_serial_backend(const CsrMatrix<float>&,
                                                                 const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_serial_backend(const CsrMatrix<double>&,
                                                                  const BackendOptions&);

}  // namespace cgs
