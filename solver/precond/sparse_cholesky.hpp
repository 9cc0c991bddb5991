// The junction system's sparse Cholesky factorisation A = L L^T in EPANET's own way (smatrix.c,
// after George & Liu, "Computer Solution of Large Sparse Positive Definite Systems", 1981):
// a fill-reducing elimination order and the pattern of L once per sparsity pattern, then per
// system a left-looking column factorisation and two triangular solves in the same order of
// operations as EPANET's linsolve. No library: a network run loads nothing for it, and its
// rounding follows EPANET's where the order is EPANET's.
#pragma once

#include <vector>

#include "formats/csr.hpp"

namespace cgs::precond {

class SparseCholesky {
 public:
  // The pattern of L for A (symmetric, both triangles stored, columns sorted in each row)
  // eliminated in `order` (order[k]: the row eliminated k-th; a permutation of 0..n-1).
  void analyse(const CsrMatrix<double>& A, const std::vector<int>& order);
  bool analysed() const { return n_ >= 0; }

  // The numeric factorisation of A (the pattern analysed). False when a pivot is <= 0
  // (EPANET's error 110: the matrix is not positive definite in this order); *failed_row then
  // names its row of A. A shift > 0 factorises A + shift diag(A) instead (the chol
  // preconditioner's way past a pivot <= 0); 0 leaves EPANET's arithmetic untouched.
  bool factorize(const CsrMatrix<double>& A, int* failed_row, double shift = 0);

  // x = A^-1 b with the last successful factorisation.
  void solve(const std::vector<double>& b, std::vector<double>& x);

  long factor_nonzeros() const { return static_cast<long>(row_.size()); }  // below the diagonal

  // The analysis, for a schedule compiled from it (cholesky_schedule.hpp): the elimination
  // order, L's columns below the diagonal, and where each factorisation reads A.
  int size() const { return n_; }
  const std::vector<int>& order() const { return order_; }
  const std::vector<int>& column_pointers() const { return col_ptr_; }
  const std::vector<int>& row_indices() const { return row_; }
  const std::vector<int>& diagonal_sources() const { return diag_source_; }
  const std::vector<int>& value_sources() const { return value_source_; }
  // The last factorisation: L's diagonal (column k's, in elimination order) and its entries
  // below the diagonal, by columns as column_pointers() and row_indices() say.
  const std::vector<double>& diagonal() const { return diag_; }
  const std::vector<double>& values() const { return value_; }

 private:
  int n_ = -1;
  std::vector<int> order_;    // order_[k]: row of A eliminated k-th
  std::vector<int> col_ptr_;  // L below its diagonal by columns: rows of column k at
  std::vector<int> row_;      //   row_[col_ptr_[k] .. col_ptr_[k+1]), ascending
  // Where each factorisation reads A: diag_source_[k] is the entry of A on the diagonal of
  // column k, value_source_[e] the entry of A at L's value e (-1: a fill-in, 0). A gather in L's
  // order, no clearing first: each entry of L below the diagonal has at most one entry of A.
  std::vector<int> diag_source_, value_source_;
  std::vector<double> diag_, value_;
  // linsolve's work arrays: per column the next column of the same update list (link_), the
  // first entry of a column not yet used (first_), and the accumulated updates (temp_).
  std::vector<int> link_, first_;
  std::vector<double> temp_, rhs_;
};

// A fill-reducing elimination order of A's graph (approximate minimum degree).
std::vector<int> minimum_degree_order(const CsrMatrix<double>& A);

}  // namespace cgs::precond
