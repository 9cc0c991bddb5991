// What every CUDA SpMV backend shares (sizes, name, bytes model, launch shape), and the
// per-format factories that spmv/cuda/cuda_backends.cu dispatches to.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "spmv/backend.hpp"
#include "spmv/cpu/cpu_backends.hpp"  // min_bytes_model
#include "spmv/cuda/cuda_common.cuh"

namespace cgs::cuda {

inline constexpr int kDefaultBlockSize = 256;
inline constexpr unsigned kFullMask = 0xffffffffu;

// Block size and grid cap from --block-size / --blocks (0 = the kernel's default).
struct LaunchShape {
  int block_size = kDefaultBlockSize;
  int user_blocks = 0;
  bool warm_up = true;  // BackendOptions::warm_up

  static LaunchShape from(const BackendOptions& options) {
    LaunchShape shape;
    if (options.block_size > 0) shape.block_size = options.block_size;
    shape.user_blocks = options.blocks;
    shape.warm_up = options.warm_up;
    return shape;
  }
};

template <typename T>
class CudaBackendBase : public SpmvBackend<T> {
 public:
  index_t rows() const override { return rows_; }
  index_t cols() const override { return cols_; }
  index_t nnz() const override { return nnz_; }
  Device device() const override { return Device::gpu; }
  std::string name() const override { return name_; }
  std::size_t min_bytes() const override {
    return min_bytes_model(format_, rows_, cols_, nnz_, sizeof(T), hack_size_);
  }
  double transfer_seconds() const override { return transfer_seconds_; }

 protected:
  CudaBackendBase(Format format, const CsrMatrix<T>& A, std::string name, index_t hack_size = 0)
      : format_(format),
        rows_(A.rows),
        cols_(A.cols),
        nnz_(A.nnz()),
        hack_size_(hack_size),
        name_(std::move(name)),
        transfers_before_(host_to_device_seconds()) {}

  void set_name(std::string name) { name_ = std::move(name); }

  // Called at the end of each backend's constructor, the matrix in place. With `product`, one
  // product on scratch vectors: CUDA loads a kernel's module lazily, at its first launch
  // (milliseconds for cuSPARSE), and this way setup pays for it, not the first SpMV of the timed
  // solve (LaunchShape::warm_up says whether any product will run).
  void warm_up(bool product) {
    transfer_seconds_ = host_to_device_seconds() - transfers_before_;
    if (!product || rows_ == 0) return;
    DeviceArray<T> x(std::max<std::size_t>(1, std::size_t(cols_)), "warm-up x");
    DeviceArray<T> y(std::size_t(rows_), "warm-up y");
    CGS_CUDA_CHECK(cudaMemsetAsync(x.data(), 0, x.bytes(), stream()));
    this->apply(x.data(), y.data());
    CGS_CUDA_CHECK(cudaGetLastError());
    synchronize();
  }

 private:
  Format format_;
  index_t rows_, cols_, nnz_, hack_size_;
  std::string name_;
  double transfers_before_ = 0, transfer_seconds_ = 0;
};

// One factory per format; options.kernel is already resolved (never empty). Each throws
// InputError for a kernel name it does not know, listing the ones it does.
template <typename T>
std::unique_ptr<SpmvBackend<T>> make_csr_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options);
// The row-block "stream" kernel (csr_stream.cu).
template <typename T>
std::unique_ptr<SpmvBackend<T>> make_csr_stream_backend(const CsrMatrix<T>& A,
                                                        const BackendOptions& options);
// A warp per unit of about equal nonzeros (csr_balanced.cu), also in the fused loops.
template <typename T>
std::unique_ptr<SpmvBackend<T>> make_csr_balanced_backend(const CsrMatrix<T>& A,
                                                          const BackendOptions& options);
template <typename T>
std::unique_ptr<SpmvBackend<T>> make_ell_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options);
template <typename T>
std::unique_ptr<SpmvBackend<T>> make_hll_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options);
template <typename T>
std::unique_ptr<SpmvBackend<T>> make_coo_cuda_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options);
// cuSPARSE's cusparseSpMV on CSR, COO or sliced ELL (for HLL).
template <typename T>
std::unique_ptr<SpmvBackend<T>> make_cusparse_backend(const CsrMatrix<T>& A,
                                                      const BackendOptions& options);

// Every kernel accumulates a row in double, also for float data: there the products are exact
// and a long row loses only the final rounding to float. SpMV is memory-bound, and Hopper's
// FP64 rate leaves the extra arithmetic free.
template <typename T>
__device__ __forceinline__ double product(T a, T x) {
  return double(a) * double(x);
}

}  // namespace cgs::cuda
