// CG on the CPU with one OpenMP team for the whole solve.
//
// The generic conjugate_gradient (solver/cg.hpp) calls the SpMV and four fused vector operations
// per iteration, and each opens its own parallel region: five fork/joins per iteration, which
// dominate on the small systems of water networks (a few microseconds of work per iteration).
// Here each thread owns the rows of one SpMV part for the whole solve: it computes its slice of
// q = A p and of every vector update, and the threads meet only at three barriers per iteration
// (after p.q, after r.r and r.z, after the update of p). It is the same algorithm, step for step,
// with the same scalars, so it gives the generic solver's iterates up to rounding.
#pragma once

#include "solver/cg.hpp"

namespace cgs {

// Needs a backend with parts() > 0 (the OpenMP backends). Vectors are host memory; x holds the
// initial guess. SpMV times are those of thread 0's part of each product (the parts are balanced
// by nonzeros), so the rest of the team runs undisturbed.
template <typename T>
CgResult omp_fused_conjugate_gradient(SpmvBackend<T>& A, const T* inv_diag, const T* b, T* x,
                                      const CgOptions& options);

}  // namespace cgs
