// The one-call path over the staged Solver (solver.hpp), above the two choosers that build one:
// plan_and_analyze asks --precond auto's chooser (precond_probe.hpp) or the format and kernel
// inspector (inspector.hpp) where the request says auto, else plans and analyzes as asked;
// solve_system then solves, going on from auto's probe where it ran on the same b.
#pragma once

#include <vector>

#include "solver/solver.hpp"

namespace cgs {

// rhs: the right-hand side the solve will take, when known (--precond auto then probes on it: a
// random one mispredicted which candidate wins); null: not known (netsolve's trials).
PlannedSolver plan_and_analyze(const SolveRequest& request, const CsrMatrix<double>& A,
                               const std::vector<double>* rhs = nullptr);

// All of it, once: x holds the initial guess on entry (resized to zeros if empty).
SolveReport solve_system(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x, const SolveRequest& request);

}  // namespace cgs
