// The fused CPU CG loops: an iteration is two passes over the rows (solver/fused/cpu_passes.hpp)
// with the format's row walker inlined, run
//   - serially (cpu_serial.cpp): one thread, no OpenMP at all; or
//   - by one OpenMP team for the whole solve (cpu_team.cpp): each thread owns the rows of one
//     of the backend's parts and the threads meet at two barriers per iteration (after p.q and
//     after r.r, r.z), plus one per operation of a preconditioner's program.
// Same algorithm and decisions as the generic loop (solver/cg_step.hpp), so the iterates agree
// up to rounding; the scalars are on the host, so the stop rule is checked at every iteration
// (converged_at exact, no iteration past it). The SpMV pass is timed inside the loop
// (solver/fused/spmv_timer.hpp). Which of the two runs is the plan's decision (solver/plan.hpp).
#pragma once

#include "solver/cg_types.hpp"
#include "solver/precond/preconditioner.hpp"
#include "spmv/views.hpp"

namespace cgs {

// b and x in host memory, x holding the initial guess; rows from a CPU backend
// (SpmvBackend::row_view); the team runs rows.parts (one part: it runs serially).
// options.max_iters must be resolved (> 0).
template <typename T>
CgResult fused_cpu_conjugate_gradient(const Rows<T>& rows, index_t n, Preconditioner<T>& M,
                                      const T* b, T* x, const CgOptions& options, bool team);

namespace fused {
template <typename T>
CgResult serial_loop(const Rows<T>& rows, index_t n, Preconditioner<T>& M, const T* b, T* x,
                     const CgOptions& options);
template <typename T>
CgResult team_loop(const Rows<T>& rows, index_t n, Preconditioner<T>& M, const T* b, T* x,
                   const CgOptions& options);
}  // namespace fused

}  // namespace cgs
