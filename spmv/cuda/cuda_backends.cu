// make_cuda_backend: checks the launch options and dispatches the kernel named in
// options.kernel (spmv/kernel_registry.hpp lists them; empty: the format's fused-loop default)
// to our kernels or to cuSPARSE. Which kernel a solve runs by default is the planner's decision
// (solver/plan.cpp), with the measurements behind it.
#include <string>

#include "spmv/cuda/cuda_backend_base.cuh"
#include "spmv/cuda/cuda_backends.hpp"
#include "spmv/kernel_registry.hpp"

namespace cgs {

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_cuda_backend(const CsrMatrix<T>& A,
                                                  const BackendOptions& options) {
  if (options.block_size != 0 &&
      (options.block_size < 32 || options.block_size > 1024 || options.block_size % 32 != 0)) {
    throw InputError("--block-size must be a multiple of 32 between 32 and 1024, got " +
                     std::to_string(options.block_size));
  }
  if (options.blocks < 0) throw InputError("--blocks must be positive");
  BackendOptions resolved = options;
  if (resolved.kernel.empty())
    resolved.kernel =
        default_fused_gpu_kernel(options.format, A.rows > 0 ? double(A.nnz()) / A.rows : 0.0);
  require_gpu_kernel(options.format, resolved.kernel);  // InputError naming the known ones
  cuda::cuda_context();  // DeviceError now, before any conversion work, if there is no GPU
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
