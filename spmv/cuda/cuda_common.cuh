// What every CUDA source shares: checked calls, the one stream, device memory.
//
// Every kernel, copy, cuSPARSE call and timing event of cgsolve runs on the single stream of
// cuda_context(), so the backends (spmv/cuda) and the vector operations (solver/cuda) are
// ordered with each other without any extra synchronisation, and events bracket exactly the
// work between them.
#pragma once

#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "spmv/backend.hpp"

namespace cgs::cuda {

// Throws DeviceError naming the call, where it was made, and CUDA's words for the error.
[[noreturn]] void throw_call_error(const char* call, const char* file, int line,
                                   const std::string& error);
std::string describe(cudaError_t error);
std::string describe(cusparseStatus_t status);

#define CGS_CUDA_CHECK(call)                                             \
  do {                                                                   \
    const cudaError_t cgs_status_ = (call);                              \
    if (cgs_status_ != cudaSuccess)                                      \
      ::cgs::cuda::throw_call_error(#call, __FILE__, __LINE__,           \
                                    ::cgs::cuda::describe(cgs_status_)); \
  } while (0)

#define CGS_CUSPARSE_CHECK(call)                                         \
  do {                                                                   \
    const cusparseStatus_t cgs_status_ = (call);                         \
    if (cgs_status_ != CUSPARSE_STATUS_SUCCESS)                          \
      ::cgs::cuda::throw_call_error(#call, __FILE__, __LINE__,           \
                                    ::cgs::cuda::describe(cgs_status_)); \
  } while (0)

// After a kernel launch: in debug builds the launch error is checked at once; release builds
// leave it to VectorOps::check_errors() after the solve, so launches stay back to back.
#ifdef NDEBUG
#define CGS_CHECK_LAUNCH() ((void)0)
#else
#define CGS_CHECK_LAUNCH() CGS_CUDA_CHECK(cudaGetLastError())
#endif

struct CudaContext {
  int device = 0;
  int sm_count = 0;
  int max_threads_per_sm = 0;
  cudaStream_t stream = nullptr;
  std::string description;

  cusparseHandle_t cusparse();  // created on first use, bound to `stream`

 private:
  cusparseHandle_t cusparse_ = nullptr;
};

// The process-wide context, created on first use. Throws DeviceError when no device can be used.
CudaContext& cuda_context();
inline cudaStream_t stream() { return cuda_context().stream; }

// Checked device memory: an allocation that fails throws DeviceError with the bytes asked for
// and the bytes free on the device.
void* device_allocate(std::size_t bytes, const char* what);
void device_free(void* p) noexcept;
void copy_to_device(void* dst, const void* src, std::size_t bytes);  // waits
// Seconds spent in copy_to_device since the program started (so that a backend can report the
// transfer of its matrix apart from its conversion).
double host_to_device_seconds();
// Makes the pinned staging buffers of large uploads now (cuda_prepare_uploads).
void prepare_staging();
void copy_to_host(void* dst, const void* src, std::size_t bytes);    // waits
void copy_on_device(void* dst, const void* src, std::size_t bytes);  // stream order
void synchronize();                                                  // waits for the stream

// Owned device array, released on destruction. Move-only.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  DeviceArray(std::size_t n, const char* what)
      : data_(static_cast<T*>(device_allocate(n * sizeof(T), what))), size_(n) {}
  DeviceArray(const std::vector<T>& host, const char* what) : DeviceArray(host.size(), what) {
    copy_to_device(data_, host.data(), bytes());
  }
  DeviceArray(DeviceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    if (this != &other) {
      device_free(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { device_free(data_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::size_t bytes() const { return size_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// Grid size for `work` independent items of `per_block` each, capped by the user's --blocks
// (when > 0) and by the hardware limit; kernels loop grid-stride over what is left.
int grid_for(long long work, int per_block, int user_blocks);

}  // namespace cgs::cuda
