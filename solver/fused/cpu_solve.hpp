// What the serial and the team loop share around their iterations: b.b and the zero right-hand
// side, the work vectors, binding the preconditioner's program, the monitor and SpMV timer, and
// the result. Each loop passes its iterations as `iterate(A, v, program, s, monitor, timer)`,
// called with the format's view.
#pragma once

#include <algorithm>
#include <chrono>
#include <variant>

#include "solver/cg_result.hpp"
#include "solver/fused/cpu_passes.hpp"
#include "solver/fused/spmv_timer.hpp"
#include "solver/precond/preconditioner.hpp"
#include "spmv/views.hpp"

namespace cgs::fused {

template <typename T, typename Iterate>
CgResult solve_fused(const Rows<T>& rows, index_t n, Preconditioner<T>& M, const T* b, T* x,
                     const CgOptions& options, Iterate iterate) {
  cg::State s = cg::begin(norm2(b, n), options.tol, options.atol, options.max_iters);
  if (s.zero_rhs) {
    std::fill(x, x + n, T(0));
    return result_of(s);
  }
  const bool identity = M.pointwise() && !M.diagonal();
  Workspace<T> w(n, !identity);
  const Vectors<T> v = w.vectors(b, M.pointwise() ? M.diagonal() : nullptr, x);
  const precond::HostProgram<T>* program = nullptr;
  if (!M.pointwise()) {
    M.bind(v.r, v.z);
    program = M.host_program();
  }
  Monitor monitor(options, options.max_iters);
  SpmvTimer timer(options.time_spmv);
  const auto begin = std::chrono::steady_clock::now();
  std::visit([&](const auto& A) { iterate(A, v, program, s, monitor, timer); }, rows.view);
  CgResult result = result_of(s);
  result.solve_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  result.spmv = timer.result("SpMV pass (p and x updates fused in)");
  set_history(result, monitor.history());
  return result;
}

}  // namespace cgs::fused
