// Built instead of the CUDA sources when no CUDA compiler was found: every GPU request fails
// with a DeviceError that says so (cgsolve exits 4), and the CPU paths work as usual.
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs {

namespace {
constexpr const char* kNoCuda = "this cgsolve was built without CUDA (no nvcc found at build time)";
}

bool cuda_device_available(std::string* why) {
  if (why) *why = kNoCuda;
  return false;
}

std::string cuda_device_description() { return kNoCuda; }

void cuda_prepare_uploads() { throw DeviceError(kNoCuda); }

bool cuda_context_made() { return false; }

bool cuda_device_present(std::string* why) {
  if (why) *why = kNoCuda;
  return false;
}

template <typename T>
std::unique_ptr<SpmvBackend<T>> make_cuda_backend(const CsrMatrix<T>&, const BackendOptions&) {
  throw DeviceError(kNoCuda);
}

void* gpu_allocate(std::size_t, const char*) { throw DeviceError(kNoCuda); }
void gpu_free(void*) noexcept {}
void gpu_upload(void*, const void*, std::size_t) { throw DeviceError(kNoCuda); }
void gpu_download(void*, const void*, std::size_t) { throw DeviceError(kNoCuda); }

template std::unique_ptr<SpmvBackend<float>> make_cuda_backend(const CsrMatrix<float>&,
                                                               const BackendOptions&);
template std::unique_ptr<SpmvBackend<double>> make_cuda_backend(const CsrMatrix<double>&,
                                                                const BackendOptions&);

}  // namespace cgs
