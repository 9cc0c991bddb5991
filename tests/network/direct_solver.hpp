// An independent reference for the network tests: Eigen's sparse LDL^T (no iteration, no
// tolerance), behind the same LinearSolver interface as the CG path.
#pragma once

#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <chrono>

#include "network/linear_solver.hpp"

namespace cgs::net::test {

class DirectSolver final : public LinearSolver {
 public:
  LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Eigen::Triplet<double>> entries;
    for (index_t r = 0; r < A.rows; ++r)
      for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
        entries.emplace_back(r, A.col_idx[k], A.values[k]);
    Eigen::SparseMatrix<double> M(A.rows, A.cols);
    M.setFromTriplets(entries.begin(), entries.end());
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(M);
    Eigen::Map<const Eigen::VectorXd> rhs(b.data(), b.size());
    Eigen::VectorXd solution = ldlt.solve(rhs);
    x.assign(solution.data(), solution.data() + solution.size());
    LinearSolveStats stats;
    stats.converged = ldlt.info() == Eigen::Success;
    stats.true_relative_residual = (M * solution - rhs).norm() / rhs.norm();
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return stats;
  }
  std::string name() const override { return "eigen-ldlt"; }
};

}  // namespace cgs::net::test
