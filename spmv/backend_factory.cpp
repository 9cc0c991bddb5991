#include "formats/convert.hpp"
#include "formats/stats.hpp"
#include "spmv/cpu/cpu_backends.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs {

std::string to_string(Device device) {
  switch (device) {
    case Device::serial: return "serial";
    case Device::omp: return "omp";
    case Device::gpu: return "cuda";
  }
  return "?";
}

Device parse_device(const std::string& name) {
  if (name == "serial") return Device::serial;
  if (name == "cpu" || name == "omp") return Device::omp;
  if (name == "gpu" || name == "cuda") return Device::gpu;
  throw InputError("unknown device '" + name + "' (expected cpu, serial or gpu)");
}

std::size_t min_bytes_model(Format format, index_t rows, index_t cols, index_t nnz,
                            std::size_t value_size, index_t hack_size) {
  const std::size_t i = sizeof(index_t), v = value_size;
  const std::size_t vectors = std::size_t(cols) * v + std::size_t(rows) * v;
  const std::size_t entries = std::size_t(nnz) * (v + i);
  switch (format) {
    case Format::coo: return entries + std::size_t(nnz) * i + vectors;
    case Format::csr: return entries + (std::size_t(rows) + 1) * i + vectors;
    case Format::ell: return entries + std::size_t(rows) * i + vectors;
    case Format::hll: {
      const std::size_t hacks = hack_size > 0 ? (std::size_t(rows) + hack_size - 1) / hack_size : 0;
      return entries + std::size_t(rows) * i + hacks * (i + sizeof(offset_t)) + vectors;
    }
  }
  return 0;
}

template <typename T>
HllMatrix<T> make_hll(const CsrMatrix<T>& A, const BackendOptions& options) {
  // --hll-sigma and --hll-tail K cut where asked; otherwise the row lengths decide
  // (choose_hll_sigma, then the tail on the order it gives), on every device: on a power-law
  // matrix the tail is what keeps HLL near bandwidth (BENCHMARKS.md §12b), the sorted windows
  // what keeps its hacks from padding short rows to long ones (§12e).
  index_t sigma = options.hll_sigma;
  index_t tail_from = options.hll_tail;
  if (sigma < 0) {
    const HllOrder order = choose_hll_sigma(A, options.hack_size);
    sigma = order.sigma;
    if (tail_from < 0) tail_from = order.tail.from;
  }
  if (tail_from < 0) tail_from = choose_hll_tail(A, options.hack_size, sigma).from;
  return to_hll(A, options.hack_size, tail_from, sigma);
}

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_backend(const CsrMatrix<T>& A, const BackendOptions& options) {
  if (options.format == Format::ell) {
    check_ell_size(compute_stats(A, options.hack_size), options.max_ell_fill,
                   physical_memory_bytes() / 2);
  }
  switch (options.device) {
    case Device::serial: return make_serial_backend(A, options);
    case Device::omp: return make_omp_backend(A, options);
    case Device::gpu: return make_cuda_backend(A, options);
  }
  throw InputError("unknown device");
}

template HllMatrix<float> make_hll(const CsrMatrix<float>&, const BackendOptions&);
template HllMatrix<double> make_hll(const CsrMatrix<double>&, const BackendOptions&);
template std::unique_ptr<SpmvBackend<float>> make_backend(const CsrMatrix<float>&,
                                                          const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_backend(const CsrMatrix<double>&,
                                                           const BackendOptions&);

}  // namespace cgs
