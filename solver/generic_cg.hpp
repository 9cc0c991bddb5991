// The generic CG loop: one call per operation of solver/cg_step.hpp's iteration, on any device
// and any SpMV backend (SpmvBackend::apply) and any preconditioner (fused into the residual
// update when pointwise, Preconditioner::apply otherwise). It is the loop that times every SpMV
// apart (CUDA events on the GPU), and the one every backend can run, also those without a row
// function for the fused loops (solver/fused/).
//
// The host reads the state every `check_every` iterations; the device records the exact
// iteration at which the tolerance was met, so at most check_every - 1 extra iterations run
// (they change nothing) and the report is exact.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "solver/cg_result.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/vector_ops.hpp"
#include "spmv/backend.hpp"

namespace cgs {

// Solves A x = b; b and x in the device's memory, x holding the initial guess. max_iters in
// options must be resolved (> 0).
template <typename T>
CgResult generic_conjugate_gradient(SpmvBackend<T>& A, Preconditioner<T>& M, VectorOps<T>& ops,
                                    const T* b, T* x, const CgOptions& options) {
  const std::size_t n = ops.size();
  const long max_iters = options.max_iters;
  const long check_every = std::max(1, options.check_every);
  const bool pointwise = M.pointwise();
  const T* d = M.diagonal();  // pointwise: null for the identity (z is r)

  DeviceVector<T> r(ops, n), p(ops, n), q(ops, n);
  DeviceVector<T> z(ops, pointwise && !d ? 0 : n);
  T* z_or_r = pointwise && !d ? r.data() : z.data();

  ops.begin(b, options.tol, options.atol, max_iters,
            options.record_history ? std::size_t(max_iters) + 1 : 0);
  if (ops.read_state().zero_rhs) {  // b = 0: x = 0, no iteration
    const std::vector<T> zero(n, T(0));
    ops.upload(zero.data(), x, n);
    return result_of(ops.read_state());
  }
  ops.mark_solve_begin();
  A.apply(x, q.data());
  ops.residual(b, q.data(), r.data(), pointwise, d, z_or_r);
  if (!pointwise) {
    M.apply(r.data(), z_or_r);
    ops.dot_rz(r.data(), z_or_r, 0);
  }
  ops.copy(z_or_r, p.data());
  cg::State s = ops.read_state();

  const int sample_every = ops.spmv_sample_every();
  long k = 0;
  while (!s.stopped && k < max_iters) {
    ++k;
    const bool timed = options.time_spmv && (k - 1) % sample_every == 0;
    if (timed) ops.mark_spmv_begin();
    A.apply(p.data(), q.data());
    if (timed) ops.mark_spmv_end();
    ops.dot_pq(p.data(), q.data(), k);
    ops.update_xr(p.data(), q.data(), x, r.data(), pointwise, d, z_or_r, k);
    if (!pointwise) {
      M.apply(r.data(), z_or_r);
      ops.dot_rz(r.data(), z_or_r, k);
    }
    ops.update_p(z_or_r, p.data());
    if (k % check_every == 0 || k == max_iters) {
      s = ops.read_state();
      if (options.progress) options.progress(k, std::sqrt(s.rr / s.bb));
    }
  }
  ops.mark_solve_end();
  ops.check_errors();
  s = ops.read_state();

  CgResult result = result_of(s);
  if (s.breakdown_at < 0) result.iterations = k;  // iterations run, past converged_at too
  result.solve_seconds = ops.solve_seconds();
  if (options.time_spmv) {
    result.spmv.samples = ops.spmv_seconds();
    result.spmv.every = sample_every;
    result.spmv.what = "SpMV";
  }
  if (options.record_history) set_history(result, ops.history());
  return result;
}

}  // namespace cgs
