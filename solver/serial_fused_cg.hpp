// CG on one CPU thread in two row passes per iteration (solver/fused_cpu_passes.hpp), with the
// format's row products inlined: no parallel region, no barrier, no clock read, no virtual call
// per row, against five separate calls (and two clock reads, ~85 ns each on a VM) per iteration
// for the generic loop of solver/cg.hpp. On one thread pass A keeps a single p buffer, updated
// just ahead of the product (serial_fused_cg.cpp, Chunk). It runs the serial device, and the
// OpenMP device where a system is too small for threads to pay (solver/omp_fused_cg.hpp).
//
// Semantics are those of solver/cg.hpp: the stopping rule (r.r <= max(tol ||b||, atol)^2),
// breakdown (p.Ap <= 0) and NaN/Inf, b = 0, the iteration limit, x0, the history and Jacobi.
// The scalars are on the host, so convergence is checked at every iteration: converged_at is
// exact and no iteration runs past it whatever check_every (which only paces `progress`).
// The SpMV is not a step of its own here, so spmv_seconds stays empty (as in the fused GPU loops).
#pragma once

#include "solver/cg.hpp"

namespace cgs {

// A is a CPU backend's stored matrix (SpmvBackend::host_matrix); vectors are host memory, x
// holds the initial guess; inv_diag is 1 / diag(A) for Jacobi, or null.
template <typename T>
CgResult serial_fused_conjugate_gradient(const HostMatrix<T>& A, index_t n, const T* inv_diag,
                                         const T* b, T* x, const CgOptions& options);

}  // namespace cgs
