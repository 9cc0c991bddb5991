// Shared by the preconditioner tests (test_preconditioners.cpp, test_amg.cpp): A as a dense
// matrix, a preconditioner built on A, and M^-1 as a dense matrix (applied to unit vectors).
#pragma once

#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/solver.hpp"

namespace cgs::testing {

// `--precond auto` on one device with CSR (on one core for Device::serial: the probe's choices
// then depend on this machine alone).
inline SolveRequest auto_request(Device device, double tol) {
  SolveRequest o;
  o.backend.format = Format::csr;
  o.backend.device = device;
  o.cg.tol = tol;
  o.precond = parse_precond("auto");
  return o;
}

inline Eigen::MatrixXd dense(const CsrMatrix<double>& A) {
  Eigen::MatrixXd D = Eigen::MatrixXd::Zero(A.rows, A.cols);
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) D(i, A.col_idx[k]) = A.values[k];
  return D;
}

inline std::unique_ptr<Preconditioner<double>> built(const std::string& name,
                                                     const CsrMatrix<double>& A,
                                                     Device device = Device::serial,
                                                     int threads = 1) {
  auto M = make_preconditioner<double>(parse_precond(name), device, threads);
  M->analyze(A);
  return M;
}

// M^-1 as a dense matrix: apply to every unit vector.
inline Eigen::MatrixXd inverse_of(Preconditioner<double>& M, index_t n) {
  Eigen::MatrixXd Minv(n, n);
  std::vector<double> e(static_cast<std::size_t>(n), 0.0), z(static_cast<std::size_t>(n));
  for (index_t j = 0; j < n; ++j) {
    e[j] = 1;
    M.apply(e.data(), z.data());
    e[j] = 0;
    for (index_t i = 0; i < n; ++i) Minv(i, j) = z[i];
  }
  return Minv;
}

}  // namespace cgs::testing
