// The fused GPU loop per format view, built in two sources (fused_cg_csr.cu: CSR with a thread
// or a lane group per row; fused_cg_formats.cu: ELL, HLL, COO) so that they compile in parallel;
// fused_cg_factory.cu picks the one a backend's rows need.
#pragma once

#include "solver/cuda/fused_cg.hpp"

namespace cgs::fused {

#define CGS_FUSED_FOR_VIEW(View)                                                     \
  template <typename T>                                                              \
  std::unique_ptr<FusedGpuLoop<T>> make_for_view(const View<T>& view, std::size_t n, \
                                                 Preconditioner<T>& M, Loop loop);   \
  template <typename T>                                                              \
  PersistentLimits limits_for_view(const View<T>& view);
CGS_FUSED_FOR_VIEW(CsrView)
CGS_FUSED_FOR_VIEW(EllView)
CGS_FUSED_FOR_VIEW(HllView)
CGS_FUSED_FOR_VIEW(CooView)
#undef CGS_FUSED_FOR_VIEW

}  // namespace cgs::fused
