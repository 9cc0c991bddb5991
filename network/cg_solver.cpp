#include <chrono>
#include <cmath>

#include "network/linear_solver.hpp"

namespace cgs::net {
namespace {

// Symmetric diagonal scaling in place: A <- D^-1/2 A D^-1/2, returns D^-1/2.
std::vector<double> scale_symmetric(CsrMatrix<double>& A) {
  std::vector<double> s(A.rows, 1.0);
  for (index_t r = 0; r < A.rows; ++r) {
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
      if (A.col_idx[k] == r && A.values[k] > 0) s[r] = 1.0 / std::sqrt(A.values[k]);
    }
  }
  for (index_t r = 0; r < A.rows; ++r) {
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) A.values[k] *= s[r] * s[A.col_idx[k]];
  }
  return s;
}

class CgSolver final : public LinearSolver {
 public:
  explicit CgSolver(const SolveOptions& options) : options_(options) {
    options_.preconditioner = Preconditioner::none;  // the scaling below is the preconditioner
  }

  LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    const auto start = std::chrono::steady_clock::now();
    CsrMatrix<double> scaled = A;
    const std::vector<double> s = scale_symmetric(scaled);
    std::vector<double> scaled_b(b.size()), y(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) {
      scaled_b[i] = b[i] * s[i];
      y[i] = x.empty() ? 0.0 : x[i] / s[i];  // warm start from the previous heads
    }
    const SolveReport report = solve_system(scaled, scaled_b, y, options_);
    x.resize(b.size());
    for (std::size_t i = 0; i < b.size(); ++i) x[i] = y[i] * s[i];

    LinearSolveStats stats;
    stats.iterations = report.cg.iterations;
    stats.relative_residual = report.true_relative_residual;
    stats.converged = report.cg.ok();
    const std::vector<double> Ax = multiply(A, x);
    double rr = 0;
    for (std::size_t i = 0; i < b.size(); ++i) rr += (b[i] - Ax[i]) * (b[i] - Ax[i]);
    const double nb = norm2(b);
    stats.true_relative_residual = nb > 0 ? std::sqrt(rr) / nb : std::sqrt(rr);
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return stats;
  }

  std::string name() const override {
    return "cg/" + to_string(options_.backend.format) + "/" + to_string(options_.backend.device) +
           (options_.sort_rows ? "/sorted" : "") + " (symmetric Jacobi scaling)";
  }

 private:
  SolveOptions options_;
};

}  // namespace

std::unique_ptr<LinearSolver> make_cg_solver(const SolveOptions& options) {
  return std::make_unique<CgSolver>(options);
}

}  // namespace cgs::net
