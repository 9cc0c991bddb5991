// Fused GPU CG loops: the whole CG iteration in two row passes (SpMV with the p update, then the
// residual update), each fused with its reductions, the scalars never leaving the device, and a
// preconditioner's program (if it has one) run between them, an operation per grid-wide sync:
//   persistent  one cooperative kernel for the whole solve, grid-wide syncs between the passes
//   graph       the passes as ordinary kernels, check_every iterations captured in a CUDA graph
//               and replayed (for devices or grids where cooperative launch is refused)
// Both take the SpMV from the backend's device row function (SpmvBackend::row_view: csr scalar
// and the lane-group kernels, ell, hll thread, coo through its row offsets), and every decision
// from solver/cg_step.hpp. Implemented in fused_cg*.cu; a build without CUDA gets the stubs of
// solver/no_cuda.cpp.
#pragma once

#include <memory>
#include <string>

#include "solver/cg_types.hpp"
#include "solver/loop.hpp"
#include "solver/precond/preconditioner.hpp"
#include "spmv/views.hpp"

namespace cgs {

// One fused loop bound to one backend's rows and one preconditioner; its work vectors are
// allocated once and reused by every solve. CgResult as from the generic loop, except that the
// device checks convergence every iteration, so iterations == converged_at whatever
// check_every (which only sets how often the host looks, for options.progress). The SpMV pass
// of every iteration is timed inside the loop (options.time_spmv): on the SM clock of the
// leading block in the persistent kernel, on the GPU's global timer in the graph.
template <typename T>
class FusedGpuLoop {
 public:
  virtual ~FusedGpuLoop() = default;
  virtual Loop loop() const = 0;  // persistent or graph
  // b, x in device memory; x holds the initial guess. options.max_iters must be resolved.
  virtual CgResult solve(const T* b, T* x, const CgOptions& options) = 0;
};

// The fused loop `loop` (persistent or graph) for rows on the device and the preconditioner M
// (which must outlive it). Throws InputError if the rows are not on the device.
template <typename T>
std::unique_ptr<FusedGpuLoop<T>> make_fused_gpu_loop(const Rows<T>& rows, index_t n,
                                                     Preconditioner<T>& M, Loop loop);

// What the planner needs to choose between the two: whether the device launches cooperative
// kernels, and how many rows one resident wave of the persistent kernel covers (a thread per
// row) for a format's row function (lanes: CSR's lanes per row, 1 for a thread per row).
struct PersistentLimits {
  bool cooperative = false;
  long long wave_rows = 0;
};
template <typename T>
PersistentLimits persistent_limits(Format format, int lanes);

}  // namespace cgs
