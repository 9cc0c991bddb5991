// The fused GPU loops for ELL, HLL and COO: a thread per row, through each format's row
// function (spmv/cuda/*_device.cuh).
#include "solver/cuda/fused_cg_dispatch.hpp"
#include "solver/cuda/fused_cg_impl.cuh"

namespace cgs::fused {

#define CGS_FUSED_THREAD_PER_ROW(View)                                                           \
  template <typename T>                                                                          \
  std::unique_ptr<FusedGpuLoop<T>> make_for_view(const View<T>& view, std::size_t n,             \
                                                 Preconditioner<T>& M, Loop loop) {              \
    return make_for_source<T>(ThreadPerRow<View<T>>{view}, n, M, loop);                          \
  }                                                                                              \
  template <typename T>                                                                          \
  PersistentLimits limits_for_view(const View<T>&) {                                             \
    return limits_for<T, ThreadPerRow<View<T>>>();                                               \
  }                                                                                              \
  template std::unique_ptr<FusedGpuLoop<float>> make_for_view(const View<float>&, std::size_t,   \
                                                              Preconditioner<float>&, Loop);     \
  template std::unique_ptr<FusedGpuLoop<double>> make_for_view(const View<double>&, std::size_t, \
                                                               Preconditioner<double>&, Loop);   \
  template PersistentLimits limits_for_view(const View<float>&);                                 \
  template PersistentLimits limits_for_view(const View<double>&);
CGS_FUSED_THREAD_PER_ROW(EllView)
CGS_FUSED_THREAD_PER_ROW(HllView)
CGS_FUSED_THREAD_PER_ROW(CooView)
#undef CGS_FUSED_THREAD_PER_ROW

}  // namespace cgs::fused
