// Built instead of network/*_gpu.cu when no CUDA compiler was found: the batched engines of a
// study on the GPU fail with a DeviceError that says so (netsolve exits 4).
#include "network/batch_cholesky.hpp"
#include "network/batch_trials.hpp"
#include "spmv/backend.hpp"

namespace cgs {

namespace {
constexpr const char* kNoCuda = "this cgsolve was built without CUDA (no nvcc found at build time)";
}

std::unique_ptr<BatchCholesky> make_batch_cholesky(const CholeskyScheduleView&) {
  throw DeviceError(kNoCuda);
}

std::unique_ptr<BatchTrials> make_batch_trials(const net::trials::NetworkView&, const int*,
                                               std::size_t, const double*, std::size_t) {
  throw DeviceError(kNoCuda);
}

}  // namespace cgs
