// Fused GPU CG loops: the whole CG iteration in two row passes (SpMV with the p update, then the
// residual update), each fused with its reductions, the scalars never leaving the device.
//   persistent  one cooperative kernel for the whole solve, grid-wide syncs between the passes
//   graph       the two passes as ordinary kernels, check_every iterations captured in a CUDA
//               graph and replayed (for devices or grids where cooperative launch is refused)
//   generic     solver/cg.hpp driving CudaVectorOps (separate kernels, SpMV timed by events)
// Both fused loops take the SpMV from the backend's own device function of a row
// (spmv/cuda/fused_spmv.cuh); a backend without one (CSR vector kernels, COO, cuSPARSE) gets
// no fused loop and the caller runs the generic one. Implemented in fused_cg.cu; a build
// without CUDA gets the stubs below.
#pragma once

#include <memory>
#include <string>

#include "solver/cg.hpp"
#include "spmv/backend.hpp"

namespace cgs {

enum class GpuLoop { automatic, persistent, graph, generic };

inline std::string to_string(GpuLoop loop) {
  switch (loop) {
    case GpuLoop::automatic: return "auto";
    case GpuLoop::persistent: return "persistent";
    case GpuLoop::graph: return "graph";
    case GpuLoop::generic: return "generic";
  }
  return "?";
}

inline GpuLoop parse_gpu_loop(const std::string& name) {
  for (GpuLoop loop : {GpuLoop::automatic, GpuLoop::persistent, GpuLoop::graph, GpuLoop::generic}) {
    if (to_string(loop) == name) return loop;
  }
  throw InputError("unknown GPU loop '" + name + "' (expected auto, persistent, graph, generic)");
}

// One fused loop bound to one backend; its work vectors are allocated once and reused by every
// solve. CgResult as from conjugate_gradient(), except: the device checks convergence every
// iteration, so iterations == converged_at on convergence whatever check_every (which only sets
// how often the host looks, for options.progress); spmv_seconds stays empty, since the SpMV is
// fused with the vector updates and cannot be timed apart.
template <typename T>
class FusedCg {
 public:
  virtual ~FusedCg() = default;
  virtual GpuLoop loop() const = 0;  // persistent or graph
  // b, x, inv_diag (null: no preconditioner) in device memory; x holds the initial guess.
  virtual CgResult solve(const T* inv_diag, const T* b, T* x, const CgOptions& options) = 0;
};

#if CGSOLVE_HAVE_CUDA
// The fused loop `loop` for A (automatic: the fastest measured, see fused_cg.cu), or null when
// there is none (loop generic, A's kernel has no row function, or cooperative launch is not
// possible for persistent); then *why (when given) says why.
template <typename T>
std::unique_ptr<FusedCg<T>> make_fused_cg(SpmvBackend<T>& A, GpuLoop loop, std::string* why);
#else
template <typename T>
std::unique_ptr<FusedCg<T>> make_fused_cg(SpmvBackend<T>&, GpuLoop, std::string* why) {
  if (why) *why = "built without CUDA";
  return nullptr;
}
#endif

}  // namespace cgs
