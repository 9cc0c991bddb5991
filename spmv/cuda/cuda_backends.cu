// make_cuda_backend: checks the launch options, resolves the default kernel of the format and
// dispatches to our kernels or to cuSPARSE.
//
// Kernels per format (--kernel):
//   csr: scalar, vector (warp per row), vector2 .. vector32, adaptive (group from the mean row
//        length), stream (row blocks of equal nonzeros, csr_stream.cu; stream4/stream8 fix its
//        chunk), cusparse
//   ell: thread
//   hll: thread, cusparse (sliced ELL)
//   coo: segscan = segscan-shfl, segscan-shared, cusparse
// Defaults: the fastest measured on an H200 (scripts/gpu-check.sh bench; 4M-row 5-point
// Laplacian, 1M-row irregular matrix, 4M-row water-network-like graph; float and double):
//   csr: scalar when the mean row length is at most 10 (25-45% faster than cuSPARSE and 1.5-3x
//        the vector kernels on rows of 3-5 entries, and the fused CG loops need its row
//        function), else stream (2026-11-22: 1.03-1.05x cuSPARSE on power-law graphs, 1.4x on
//        3D Poisson, where cuSPARSE had been 20% ahead of our best vector variant);
//   ell: thread (the only one);
//   hll: cuSPARSE's sliced ELL, equal or up to 1.6x faster than our kernel in every case
//        (our kernel when the padded slots do not fit its 32-bit offsets);
//   coo: cuSPARSE, 1.2-2.4x faster than the segmented scan (which runs with --kernel segscan).
#include <algorithm>
#include <climits>
#include <string>

#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs {
namespace {

constexpr double kScalarCsrMaxMeanLength = 10;

// Slots of the HLL layout (padding included): cuSPARSE's sliced ELL takes 32-bit offsets.
template <typename T>
bool hll_fits_32_bit_offsets(const CsrMatrix<T>& A, index_t hack_size) {
  long long slots = 0;
  for (index_t first = 0; first < A.rows; first += hack_size) {
    index_t width = 0;
    for (index_t r = first; r < std::min<long long>(A.rows, (long long)first + hack_size); ++r) {
      width = std::max(width, A.row_length(r));
    }
    slots += (long long)width * hack_size;
  }
  return slots <= INT_MAX;
}

template <typename T>
std::string default_kernel(const CsrMatrix<T>& A, const BackendOptions& options) {
  switch (options.format) {
    case Format::csr: {
      const double mean = A.rows > 0 ? double(A.nnz()) / A.rows : 0.0;
      return mean <= kScalarCsrMaxMeanLength ? "scalar" : "stream";
    }
    case Format::ell: return "thread";
    case Format::hll:
      return options.hack_size > 0 && hll_fits_32_bit_offsets(A, options.hack_size) ? "cusparse"
                                                                                    : "thread";
    case Format::coo: return "cusparse";
  }
  return "";
}

}  // namespace

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_cuda_backend(const CsrMatrix<T>& A,
                                                  const BackendOptions& options) {
  if (options.block_size != 0 &&
      (options.block_size < 32 || options.block_size > 1024 || options.block_size % 32 != 0)) {
    throw InputError("--block-size must be a multiple of 32 between 32 and 1024, got " +
                     std::to_string(options.block_size));
  }
  if (options.blocks < 0) throw InputError("--blocks must be positive");
  cuda::cuda_context();  // DeviceError now, before any conversion work, if there is no GPU
  BackendOptions resolved = options;
  if (resolved.kernel.empty()) resolved.kernel = default_kernel(A, options);
  if (resolved.kernel == "cusparse") return cuda::make_cusparse_backend(A, resolved);
  switch (options.format) {
    case Format::csr: return cuda::make_csr_cuda_backend(A, resolved);
    case Format::ell: return cuda::make_ell_cuda_backend(A, resolved);
    case Format::hll: return cuda::make_hll_cuda_backend(A, resolved);
    case Format::coo: return cuda::make_coo_cuda_backend(A, resolved);
  }
  throw InputError("unknown format");
}

template std::unique_ptr<SpmvBackend<float>> make_cuda_backend(const CsrMatrix<float>&,
                                                               const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_cuda_backend(const CsrMatrix<double>&,
                                                                const BackendOptions&);

}  // namespace cgs
