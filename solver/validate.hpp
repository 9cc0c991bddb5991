// --validate: solve the same system with Eigen, independently of our formats and kernels, and
// compare the solutions.
#pragma once

#include <string>
#include <vector>

#include "formats/csr.hpp"

namespace cgs {

struct ValidationOptions {
  double tol = 1e-8;                        // Eigen CG's tolerance (the same as ours)
  double max_difference = 1e-6;             // pass when the A-norm difference is at most this
  index_t direct_solver_max_rows = 200000;  // SimplicialLDLT up to this size
};

struct ValidationReport {
  // Eigen ConjugateGradient<Lower|Upper> (with its default Jacobi preconditioner).
  double cg_seconds = 0;
  long cg_iterations = 0;
  double cg_estimated_error = 0;
  bool cg_converged = false;
  double cg_difference = 0;  // ||x - x_cg|| / ||x_cg||
  // SimplicialLDLT, when n is small enough and the factorisation succeeds.
  bool direct_done = false;
  std::string direct_note;  // why it was not done, or failed
  double direct_seconds = 0;
  double direct_difference = 0;  // ||x - x_ldlt|| / ||x_ldlt||
  // The reference: LDLT when done, Eigen's CG otherwise. `difference` is in the energy norm
  // that CG minimises, ||x - x_ref||_A / ||x_ref||_A with ||v||_A = sqrt(v'Av): directions
  // of tiny eigenvalues (parts of a network cut off by closed valves, say), where no solver
  // can pin x down, weigh little. The 2-norm difference is reported beside it.
  std::string reference;
  double difference = 0;        // A-norm, decides pass/fail
  double difference_2norm = 0;  // ||x - x_ref|| / ||x_ref||
  bool passed = false;
};

ValidationReport validate_with_eigen(const CsrMatrix<double>& A, const std::vector<double>& b,
                                     const std::vector<double>& x,
                                     const ValidationOptions& options);

}  // namespace cgs
