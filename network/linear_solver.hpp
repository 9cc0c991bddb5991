// The linear solve of one gradient-algorithm trial, behind an interface so the hydraulics do not
// depend on how the junction system is solved: netsolve uses cgsolve's CG (any format, device,
// sorting), the tests can also use an independent direct solver as a reference.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/solve.hpp"

namespace cgs::net {

struct LinearSolveStats {
  long iterations = 0;                // CG iterations (0 for a direct solver)
  double seconds = 0;                 // wall time of the whole solve call
  double relative_residual = 0;       // of the system the stopping test looked at
  double true_relative_residual = 0;  // ||b - A x|| / ||b|| of the unscaled system
  bool converged = true;
};

class LinearSolver {
 public:
  virtual ~LinearSolver() = default;
  // x holds the initial guess (the previous trial's heads) on entry.
  virtual LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                                 std::vector<double>& x) = 0;
  virtual std::string name() const = 0;
};

// cgsolve's CG on the symmetrically scaled system D^-1/2 A D^-1/2 y = D^-1/2 b, x = D^-1/2 y
// (D = diag A), with options.preconditioner forced to none: the scaling is the Jacobi
// preconditioner, and the stopping test ||D^-1/2 (b - A x)|| <= tol ||D^-1/2 b|| then compares
// residuals of rows whose scales differ by 1e12 on an equal footing. See network/README.md.
std::unique_ptr<LinearSolver> make_cg_solver(const SolveOptions& options);

}  // namespace cgs::net
