// precond::SparseCholesky's analysis compiled into a flat schedule (network/batch_cholesky.hpp says
// what the schedule is): once per network, then executed for any number of systems of the
// pattern -- on the host by CholeskyScheduleExecutor (the reference, equal to precond::SparseCholesky bit
// for bit), on the device by BatchCholesky (netsolve --study ... --device gpu).
#pragma once

#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/sparse_cholesky.hpp"
#include "network/cholesky_executor.hpp"

namespace cgs::net {

// The owning arrays behind a CholeskyScheduleView.
struct CholeskySchedule {
  int n = 0, a_nnz = 0;
  std::vector<int> order, diag_source, value_source, col_ptr, row;
  std::vector<int> pivot_ptr, pivot_terms;
  std::vector<int> update_ptr, update_source, update_multiplier;

  CholeskyScheduleView view() const;
  long updates() const { return static_cast<long>(update_source.size()); }
  int factor_slots() const { return n + static_cast<int>(row.size()); }
};

// The schedule of an analysed factorisation (std::logic_error if `cholesky` is not analysed).
// a_nnz: the entries of the matrices it will factorise (the pattern it was analysed on).
CholeskySchedule compile_schedule(const precond::SparseCholesky& cholesky, long a_nnz);

// The schedule run on the host, one system at a time: what the device does per thread, and the
// reference its tests compare with.
class CholeskyScheduleExecutor {
 public:
  explicit CholeskyScheduleExecutor(const CholeskySchedule& schedule);
  // False at a pivot <= 0; *failed_row then names A's row (as precond::SparseCholesky::factorize).
  bool factorize(const CsrMatrix<double>& A, int* failed_row);
  void solve(const std::vector<double>& b, std::vector<double>& x);
  // The same on raw arrays: A's values in CSR order (the schedule's a_nnz), b and x of n.
  bool factorize(const double* values, int* failed_row);
  void solve(const double* b, double* x);
  const std::vector<double>& factor() const { return factor_; }

 private:
  const CholeskySchedule& schedule_;
  CholeskyScheduleView view_;
  std::vector<double> factor_, rhs_;
};

}  // namespace cgs::net
