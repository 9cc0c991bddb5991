// The fused CPU CG loops, and which one runs.
//
// The generic conjugate_gradient (solver/cg.hpp) calls the SpMV and four vector operations per
// iteration, each its own call (on the OpenMP device, its own parallel region: five fork/joins
// per iteration, which dominate on the small systems of water networks). The fused loops make an
// iteration two passes over the rows (solver/fused_cpu_passes.hpp) with the format's row
// products inlined:
// - serial (solver/serial_fused_cg.hpp): one thread, no OpenMP at all; the serial device, and
//   the OpenMP device when the system is too small for threads to pay (below);
// - team: one OpenMP team for the whole solve; each thread owns the rows of one SpMV part and
//   the threads meet at two barriers per iteration, after p.q and after r.r and r.z.
// Same algorithm and scalars as the generic loop, so the iterates agree up to rounding; the
// scalars are on the host, so convergence is checked at every iteration (converged_at exact,
// no iteration past it). spmv_seconds stays empty: the product is not a step of its own.
#pragma once

#include <string>

#include "solver/cg.hpp"

namespace cgs {

enum class FusedCpuLoop { automatic, serial, team };

// Below this many stored entries plus rows, the OpenMP device runs the serial fused loop: the
// two barriers of a team iteration (a few microseconds on a busy 2-core VM) cost more than
// the second thread saves (measured with cgbench; see the report of the change).
inline constexpr long kMinWorkForThreads = 20000;

// Whether the fused loops can run on this backend: a CPU backend that exposes its matrix.
template <typename T>
bool has_fused_cpu_loop(const SpmvBackend<T>& A) {
  return !A.host_matrix().empty();
}

// The fused loop for a CPU backend (has_fused_cpu_loop): the serial one on the serial device
// or a one-part backend; on the OpenMP device the team loop, unless `choice` is automatic and
// the system is below kMinWorkForThreads, or choice is serial. Vectors are host memory; x holds
// the initial guess. `loop`, if given, says which ran: "fused", or "fused (serial: ...)" and why.
template <typename T>
CgResult omp_fused_conjugate_gradient(SpmvBackend<T>& A, const T* inv_diag, const T* b, T* x,
                                      const CgOptions& options, std::string* loop = nullptr,
                                      FusedCpuLoop choice = FusedCpuLoop::automatic);

}  // namespace cgs
