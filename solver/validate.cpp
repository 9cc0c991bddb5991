#include "solver/validate.hpp"

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <chrono>
#include <cmath>

namespace cgs {
namespace {

using SparseMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor, index_t>;
using Vector = Eigen::VectorXd;
using Clock = std::chrono::steady_clock;

SparseMatrix to_eigen(const CsrMatrix<double>& A) {
  // Copy, not Map: Eigen's solvers want a column-major matrix anyway.
  Eigen::Map<const SparseMatrix> view(A.rows, A.cols, A.nnz(), A.row_ptr.data(), A.col_idx.data(),
                                      A.values.data());
  return SparseMatrix(view);
}

double relative_difference(const Vector& x, const Vector& reference) {
  const double norm = reference.norm();
  return norm > 0 ? (x - reference).norm() / norm : (x - reference).norm();
}

// ||x - reference||_A / ||reference||_A
double energy_difference(const Eigen::SparseMatrix<double>& A, const Vector& x,
                         const Vector& reference) {
  const Vector e = x - reference;
  const double reference_energy = reference.dot(A * reference);
  const double error_energy = std::max(0.0, e.dot(A * e));
  return reference_energy > 0 ? std::sqrt(error_energy / reference_energy)
                              : std::sqrt(error_energy);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

ValidationReport validate_with_eigen(const CsrMatrix<double>& A, const std::vector<double>& b,
                                     const std::vector<double>& x,
                                     const ValidationOptions& options) {
  ValidationReport report;
  const Eigen::SparseMatrix<double> M = to_eigen(A);
  const Eigen::Map<const Vector> rhs(b.data(), Eigen::Index(b.size()));
  const Eigen::Map<const Vector> ours(x.data(), Eigen::Index(x.size()));

  auto start = Clock::now();
  Eigen::ConjugateGradient<Eigen::SparseMatrix<double>, Eigen::Lower | Eigen::Upper> cg;
  cg.setTolerance(options.tol);
  cg.setMaxIterations(std::max<Eigen::Index>(10 * A.rows, 1));
  cg.compute(M);
  const Vector x_cg = cg.solve(rhs);
  report.cg_seconds = seconds_since(start);
  report.cg_iterations = cg.iterations();
  report.cg_estimated_error = cg.error();
  report.cg_converged = cg.info() == Eigen::Success;
  report.cg_difference = relative_difference(ours, x_cg);
  report.reference = "Eigen ConjugateGradient";
  report.difference_2norm = report.cg_difference;
  report.difference = energy_difference(M, ours, x_cg);

  if (A.rows > options.direct_solver_max_rows) {
    report.direct_note = "skipped: n > " + std::to_string(options.direct_solver_max_rows);
  } else {
    start = Clock::now();
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(M);
    if (ldlt.info() != Eigen::Success) {
      report.direct_note = "SimplicialLDLT failed: the matrix is singular or not SPD";
    } else {
      const Vector x_ldlt = ldlt.solve(rhs);
      report.direct_seconds = seconds_since(start);
      report.direct_done = true;
      report.direct_difference = relative_difference(ours, x_ldlt);
      report.reference = "Eigen SimplicialLDLT";
      report.difference_2norm = report.direct_difference;
      report.difference = energy_difference(M, ours, x_ldlt);
    }
  }
  report.passed = report.difference <= options.max_difference;
  return report;
}

}  // namespace cgs
