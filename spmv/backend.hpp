// The one interface the solver calls each iteration: y = A x on the backend's own memory.
//
// Each (format, device) pair implements it: spmv/cpu/serial_*.cpp (plain loops),
// spmv/cpu/omp_*.cpp (OpenMP), spmv/cuda/*.cu (CUDA). A backend owns its copy of the matrix in
// its device's memory, built once; apply() takes pointers in that same memory space (host
// pointers on CPU, device pointers on GPU) and is asynchronous on the GPU (stream order).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "formats/csr.hpp"
#include "formats/hll.hpp"
#include "formats/types.hpp"
#include "spmv/views.hpp"

namespace cgs {

enum class Device { serial, omp, gpu };
std::string to_string(Device device);
Device parse_device(const std::string& name);  // "serial", "cpu"/"omp", "gpu"; throws InputError

// The GPU is missing or failed (no driver, no device, out of memory, a failed CUDA call).
// cgsolve exits 4 for it.
class DeviceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename T>
class SpmvBackend {
 public:
  virtual ~SpmvBackend() = default;

  // y = A * x; x has cols() entries, y has rows() entries, both in the backend's memory.
  virtual void apply(const T* x, T* y) = 0;

  virtual index_t rows() const = 0;
  virtual index_t cols() const = 0;
  virtual index_t nnz() const = 0;
  virtual Device device() const = 0;
  virtual std::string name() const = 0;  // e.g. "csr/omp", "coo/cuda-segscan"

  // The fewest bytes one product must move for this format: the real entries (values and
  // indices), row pointers or lengths, x read once, y written once (see min_bytes_model).
  virtual std::size_t min_bytes() const = 0;

  // Seconds spent copying the matrix into the device's memory while the backend was built
  // (0 on the CPU), so that conversion and transfer are reported apart.
  virtual double transfer_seconds() const { return 0; }

  // The stored matrix for the fused CG loops (spmv/views.hpp), or nothing when this kernel has
  // no row function; then no_rows_reason() says why, for the report.
  virtual std::optional<Rows<T>> row_view() const { return std::nullopt; }
  virtual std::string no_rows_reason() const {
    return name() + " is a whole-product kernel with no row function";
  }

  // New values for the same sparsity pattern: csr_values[k] is entry k of the CSR matrix the
  // backend was built from (same row order). Nothing is converted or allocated again: the values
  // go to the format's slots, and on the GPU one copy to the device.
  virtual void set_values(const T* csr_values) = 0;
};

struct BackendOptions {
  Format format = Format::csr;
  Device device = Device::omp;
  index_t hack_size = 32;      // HLL
  index_t hll_tail = -1;       // HLL: rows past it in the HYB tail; -1: choose_hll_tail decides
  index_t hll_sigma = -1;      // HLL: rows sorted in windows of it (SELL-C-sigma); 0: not
                               // sorted; -1: choose_hll_sigma decides
  int threads = 0;             // OpenMP threads; 0 = all
  std::string kernel;          // GPU kernel variant; empty = the format's default
  int block_size = 0;          // GPU threads per block; 0 = kernel default
  int blocks = 0;              // GPU grid size (COO segmented scan); 0 = kernel default
  double max_ell_fill = 10.0;  // ELL guard (see formats/stats.hpp)
  // GPU: one product at construction, so that the first timed SpMV does not pay for loading the
  // kernel's module. Off where no product of this backend will run (the fused GPU loops run
  // their own kernels): on a small system the load is ~0.3 ms of a ~2 ms time to solution.
  bool warm_up = true;
};

// The HLL container a backend stores: options.hack_size; rows sorted inside windows of
// options.hll_sigma or, at -1, of what choose_hll_sigma (formats/stats.hpp) picks; and the HYB
// tail at options.hll_tail or, at -1, where choose_hll_tail puts it on that order.
template <typename T>
HllMatrix<T> make_hll(const CsrMatrix<T>& A, const BackendOptions& options);

// Builds the backend for options.format / options.device from A (already row-sorted if asked).
// Throws InputError for a bad combination, DeviceError when the GPU is unavailable.
template <typename T>
std::unique_ptr<SpmvBackend<T>> make_backend(const CsrMatrix<T>& A, const BackendOptions& options);

}  // namespace cgs
