// Entry points of the CUDA side, called by the device-independent factories. Implemented in
// spmv/cuda/*.cu when CUDA is built, and by spmv/cuda/no_cuda.cpp (which throws DeviceError)
// when it is not, so no caller needs an #ifdef.
#pragma once

#include <memory>
#include <string>

#include "spmv/backend.hpp"

namespace cgs {

// True when a CUDA driver and at least one device can be used; otherwise false and `why`
// says what is missing (no driver, no device, built without CUDA).
bool cuda_device_available(std::string* why = nullptr);

// One line naming the device: its name, its SM count and the CUDA version.
std::string cuda_device_description();

// Creates the device's context and the pinned buffers that large copies (uploads and
// downloads) are staged through (~20 ms of cudaMallocHost, BENCHMARKS.md §20p), so that a program
// can do it while it reads its input (cgsolve does, on a thread of its own) instead of inside
// its first upload. Safe to call
// from any thread; does nothing the second time. Throws DeviceError without a usable device.
void cuda_prepare_uploads();

// Whether this process has made the device's context already (cuda_prepare_uploads, or any GPU
// work): --device auto counts the context's creation in the GPU's fixed cost only where it has not.
bool cuda_context_made();

// Whether a device looks present, without starting the CUDA driver (which costs ~0.1 s where
// there is one): a device node exists and CUDA_VISIBLE_DEVICES does not hide them all. False in a
// build without CUDA. --device auto asks this first and cuda_device_available only once it has
// chosen the GPU.
bool cuda_device_present(std::string* why = nullptr);

// The SpMV backend for options.format with options.kernel on the GPU (A copied to the device).
template <typename T>
std::unique_ptr<SpmvBackend<T>> make_cuda_backend(const CsrMatrix<T>& A,
                                                  const BackendOptions& options);

// Device memory for code outside the CUDA sources (spmv/device_buffer.hpp): checked
// allocation (DeviceError with the bytes asked for and free), release, and waiting copies.
void* gpu_allocate(std::size_t bytes, const char* what);
void gpu_free(void* p) noexcept;
void gpu_upload(void* device_dst, const void* host_src, std::size_t bytes);
void gpu_download(void* host_dst, const void* device_src, std::size_t bytes);

}  // namespace cgs
