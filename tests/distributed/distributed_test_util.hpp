// What the distributed tests share: the MPI session (main_mpi.cpp) and the single-process solve
// they compare against.
#pragma once

#include <cmath>
#include <vector>

#include "formats/matrix_market.hpp"
#include "solver/distributed/distributed_solve.hpp"
#include "solver/solve.hpp"

namespace cgs::testing {

const dist::MpiSession& session();
inline int world_rank() { return session().rank(); }
inline int world_size() { return session().size(); }

inline double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return std::sqrt(diff / std::max(norm, 1e-300));
}

struct Solved {
  std::vector<double> x;
  long iterations = 0;
  double true_residual = 0;
  bool ok = false;
  dist::DistLoop loop = dist::DistLoop::plain;  // the distributed loop that ran
};

// The single-process solve (the reference), on every rank alike.
inline Solved solve_alone(const CsrMatrix<double>& A, const std::vector<double>& b,
                          SolveRequest request) {
  Solved s;
  const SolveReport report = solve_system(A, b, s.x, request);
  s.iterations = report.cg.iterations;
  s.true_residual = report.true_relative_residual;
  s.ok = report.cg.ok();
  return s;
}

// The distributed solve over all ranks; x and the report on rank 0 (the others get the result).
inline Solved solve_spread(const CsrMatrix<double>& A, const std::vector<double>& b,
                           const dist::DistributedRequest& request) {
  const bool root = world_rank() == 0;
  const dist::DistributedOutcome out = dist::solve_distributed(
      session(), root ? &A : nullptr, root ? &b : nullptr, nullptr, request);
  Solved s;
  s.x = out.x;
  s.iterations = out.solve.cg.iterations;
  s.true_residual = out.solve.true_relative_residual;
  s.ok = out.solve.cg.ok();
  s.loop = out.distributed.loop;
  return s;
}

inline SolveRequest cpu_request(const char* precond = "none", double tol = 1e-10) {
  SolveRequest r;
  r.backend.device = Device::omp;
  r.backend.threads = 1;
  r.precond = parse_precond(precond);
  r.cg.tol = tol;
  r.cg.check_every = 1;
  // The generic loop makes the same operations in the same order as the distributed one (the
  // fused loops round differently, which on an EPANET system moves CG's iterations by 3-6%).
  r.cpu_loop = CpuLoopAsk::generic;
  return r;
}

}  // namespace cgs::testing
