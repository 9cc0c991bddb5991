// make_fused_gpu_loop and persistent_limits: the fused loop for whichever format view a
// backend lends (solver/cuda/fused_cg_dispatch.hpp).
#include "solver/cuda/fused_cg_dispatch.hpp"

namespace cgs {

template <typename T>
std::unique_ptr<FusedGpuLoop<T>> make_fused_gpu_loop(const Rows<T>& rows, index_t n,
                                                     Preconditioner<T>& M, Loop loop) {
  if (!rows.on_device) throw InputError("the fused GPU loop needs the matrix in GPU memory");
  if (loop != Loop::persistent && loop != Loop::graph)
    throw InputError("the fused GPU loops are persistent and graph, not " + to_string(loop));
  if (n == 0) throw InputError("the fused GPU loop needs a non-empty system");
  return std::visit(
      [&](const auto& view) { return fused::make_for_view<T>(view, std::size_t(n), M, loop); },
      rows.view);
}

// The occupancy of the persistent kernel depends on the view's type (and CSR's lanes), not on
// its arrays: an empty view of the kind asks.
template <typename T>
PersistentLimits persistent_limits(Format format, int lanes) {
  switch (format) {
    case Format::csr:
      return fused::limits_for_view(CsrView<T>{0, nullptr, nullptr, nullptr, lanes});
    case Format::ell: return fused::limits_for_view(EllView<T>{});
    case Format::hll: return fused::limits_for_view(HllView<T>{});
    case Format::coo: return fused::limits_for_view(CooView<T>{});
  }
  return {};
}

template std::unique_ptr<FusedGpuLoop<float>> make_fused_gpu_loop(const Rows<float>&, index_t,
                                                                  Preconditioner<float>&, Loop);
template std::unique_ptr<FusedGpuLoop<double>> make_fused_gpu_loop(const Rows<double>&, index_t,
                                                                   Preconditioner<double>&, Loop);
template PersistentLimits persistent_limits<float>(Format, int);
template PersistentLimits persistent_limits<double>(Format, int);

}  // namespace cgs
