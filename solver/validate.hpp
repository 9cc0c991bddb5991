// --validate: solve the same system independently of our formats and kernels, and judge the
// answer by what can be compared.
//
// The verdict is the normwise backward error of our x, eta = ||b - A x||_inf / (||A||_inf
// ||x||_inf + ||b||_inf): the smallest relative change of A and b for which x is exact. CG was
// asked for ||b - A x|| <= max(tol ||b||, atol), which bounds eta by
//   eta_asked = max(tol ||b||_2, atol) / (||A||_inf ||x||_inf + ||b||_inf);
// the answer passes when eta <= 10 eta_asked (room for the recursive residual CG stops on to
// differ from the true one), or when eta is within 100x of the reference solution's own backward
// error (a tolerance below rounding cannot be met by anyone; the direct solver shows what can).
// A wrong x, or an x of a different A, has a backward error far above both and fails.
//
// The forward error ||x - x_ref||_A / ||x_ref||_A is reported beside it, with the bound that the
// residual implies, sqrt(kappa) (||r|| / ||b|| + the reference's), where kappa is estimated
// (power iterations with A and, through the factor, with A^-1). On an ill-conditioned matrix the
// forward error is large for every solver that meets the tolerance, so it does not decide.
//
// The reference must not dwarf the solve: a direct Cholesky (CHOLMOD's supernodal one where it
// was built in, Eigen's SimplicialLDLT otherwise) is run only when a symbolic analysis estimates
// it at most kMaxDirectSeconds and kMaxDirectRatio times the CG solve; otherwise Eigen's
// ConjugateGradient to a 100x tighter tolerance is the reference, and the report says which and
// why.
#pragma once

#include <string>
#include <vector>

#include "formats/csr.hpp"

namespace cgs {

struct ValidationOptions {
  double tol = 1e-8;  // the solve's tolerances, from which eta_asked follows
  double atol = 0;
  double solve_seconds = 0;        // the CG solve's time, against which the reference's is weighed
  double max_direct_seconds = 10;  // a direct solve estimated longer is not run
  double max_direct_ratio = 100;   // nor one estimated longer than this x solve_seconds
  double min_direct_budget = 0.5;  // ... unless it is estimated under this many seconds
};

struct ValidationReport {
  std::string reference;      // "CHOLMOD supernodal Cholesky", "Eigen SimplicialLDLT", ...
  std::string reference_why;  // the estimate that chose it
  double reference_seconds = 0;
  bool reference_ok = false;  // the reference solve succeeded
  double estimated_direct_seconds = 0;
  double factor_nonzeros = 0;  // of the direct factor, estimated by the symbolic analysis

  double backward_error = 0;            // eta of our x
  double reference_backward_error = 0;  // eta of x_ref
  double allowed_backward_error = 0;    // what the verdict compared eta with
  double relative_residual = 0;         // ||b - A x||_2 / ||b||_2 of our x

  double forward_error = 0;        // ||x - x_ref||_A / ||x_ref||_A
  double forward_error_2norm = 0;  // ||x - x_ref||_2 / ||x_ref||_2
  double condition_estimate = 0;   // kappa_2(A) estimate (0: none)
  double forward_bound = 0;        // sqrt(kappa) (relres + relres_ref) (0: no estimate)

  bool passed = false;
  std::string verdict;  // one line: why it passed or failed
};

ValidationReport validate_solution(const CsrMatrix<double>& A, const std::vector<double>& b,
                                   const std::vector<double>& x, const ValidationOptions& options);

// The normwise backward error eta of x (see the top of the file).
double backward_error(const CsrMatrix<double>& A, const std::vector<double>& b,
                      const std::vector<double>& x);

}  // namespace cgs
