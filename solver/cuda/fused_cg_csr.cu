// The fused GPU loops for CSR: a thread per row (the scalar kernel), a group of 2-32 lanes per
// row (the vector and adaptive kernels, for long rows) or a warp per unit of nonzeros (the
// balanced kernel, for irregular rows).
#include "solver/cuda/fused_cg_dispatch.hpp"
#include "solver/cuda/fused_cg_impl.cuh"

namespace cgs::fused {

// Calls f with the Source for the view's lanes per row.
template <typename T, typename F>
auto with_csr_source(const CsrView<T>& view, F f) {
  switch (view.lanes) {
    case 2: return f(LanesPerRow<T, 2>{view});
    case 4: return f(LanesPerRow<T, 4>{view});
    case 8: return f(LanesPerRow<T, 8>{view});
    case 16: return f(LanesPerRow<T, 16>{view});
    case 32: return f(LanesPerRow<T, 32>{view});
    case kBalancedLanes: return f(BalancedRows<T>{view});
    default: return f(ThreadPerRow<CsrView<T>>{view});
  }
}

template <typename T>
std::unique_ptr<FusedGpuLoop<T>> make_for_view(const CsrView<T>& view, std::size_t n,
                                               Preconditioner<T>& M, Loop loop) {
  return with_csr_source(view, [&](auto source) -> std::unique_ptr<FusedGpuLoop<T>> {
    return make_for_source<T>(source, n, M, loop);
  });
}

template <typename T>
PersistentLimits limits_for_view(const CsrView<T>& view) {
  return with_csr_source(view, [](auto source) { return limits_for<T, decltype(source)>(); });
}

template std::unique_ptr<FusedGpuLoop<float>> make_for_view(const CsrView<float>&, std::size_t,
                                                            Preconditioner<float>&, Loop);
template std::unique_ptr<FusedGpuLoop<double>> make_for_view(const CsrView<double>&, std::size_t,
                                                             Preconditioner<double>&, Loop);
template PersistentLimits limits_for_view(const CsrView<float>&);
template PersistentLimits limits_for_view(const CsrView<double>&);

}  // namespace cgs::fused
