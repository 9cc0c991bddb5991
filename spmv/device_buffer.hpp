// An owned array in one device's memory: host memory for the CPU devices, GPU memory for the
// GPU (through spmv/cuda/cuda_backends.hpp, so this header needs no CUDA). What the solver and
// the preconditioners keep on the device besides the matrix: b, x, 1/diag(A), work vectors.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "base/prefault.hpp"
#include "spmv/backend.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device device, std::size_t n, const char* what = "a vector")
      : gpu_(device == Device::gpu), n_(n) {
    if (gpu_)
      gpu_data_ = static_cast<T*>(gpu_allocate(n * sizeof(T), what));
    else
      host_.assign(n, T(0));
  }
  DeviceBuffer(Device device, const std::vector<T>& values, const char* what = "a vector")
      : DeviceBuffer(device, values.size(), what) {
    upload(values);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : gpu_(o.gpu_),
        n_(std::exchange(o.n_, 0)),
        host_(std::move(o.host_)),
        gpu_data_(std::exchange(o.gpu_data_, nullptr)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      gpu_ = o.gpu_;
      n_ = std::exchange(o.n_, 0);
      host_ = std::move(o.host_);
      gpu_data_ = std::exchange(o.gpu_data_, nullptr);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }

  T* data() { return gpu_ ? gpu_data_ : host_.data(); }
  const T* data() const { return gpu_ ? gpu_data_ : host_.data(); }
  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }

  void upload(const std::vector<T>& values) { upload(values.data(), values.size()); }
  void upload(const T* values, std::size_t n) {
    if (gpu_)
      gpu_upload(gpu_data_, values, n * sizeof(T));
    else
      std::copy(values, values + n, host_.begin());
  }
  std::vector<T> download() const {
    if (!gpu_) return host_;
    std::vector<T> out;
    reserve_prefaulted(out, n_);  // its pages faulted in on every core (prefault.hpp)
    out.resize(n_);
    gpu_download(out.data(), gpu_data_, n_ * sizeof(T));
    return out;
  }

 private:
  void release() {
    if (gpu_data_) gpu_free(gpu_data_);
    gpu_data_ = nullptr;
  }
  bool gpu_ = false;
  std::size_t n_ = 0;
  std::vector<T> host_;
  T* gpu_data_ = nullptr;
};

}  // namespace cgs
