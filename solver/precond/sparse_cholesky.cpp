#include "solver/precond/sparse_cholesky.hpp"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cgs::precond {
void SparseCholesky::analyse(const CsrMatrix<double>& A, const std::vector<int>& order) {
  const int n = static_cast<int>(A.rows);
  if (static_cast<int>(order.size()) != n) throw std::logic_error("elimination order: wrong size");
  order_ = order;
  std::vector<int> position(n, -1);
  for (int k = 0; k < n; ++k) position[order[k]] = k;

  // The pattern of L column by column: a column's rows are A's below the diagonal (in the
  // elimination order) and those of every column whose first row below the diagonal -- its
  // parent in the elimination tree -- is this one.
  std::vector<std::vector<int>> children(n);
  std::vector<int> mark(n, -1);
  col_ptr_.assign(1, 0);
  row_.clear();
  std::vector<int> rows;
  for (int k = 0; k < n; ++k) {
    rows.clear();
    mark[k] = k;
    const int i = order[k];
    for (index_t e = A.row_ptr[i]; e < A.row_ptr[i + 1]; ++e) {
      const int r = position[A.col_idx[e]];
      if (r > k && mark[r] != k) mark[r] = k, rows.push_back(r);
    }
    for (int child : children[k])
      for (int e = col_ptr_[child]; e < col_ptr_[child + 1]; ++e) {
        const int r = row_[e];
        if (r > k && mark[r] != k) mark[r] = k, rows.push_back(r);
      }
    std::sort(rows.begin(), rows.end());
    if (!rows.empty()) children[rows.front()].push_back(k);
    row_.insert(row_.end(), rows.begin(), rows.end());
    col_ptr_.push_back(static_cast<int>(row_.size()));
  }

  // Where each entry of L and its diagonal comes from in A: the lower triangle in elimination
  // order, once.
  diag_source_.assign(n, -1);
  value_source_.assign(row_.size(), -1);
  for (int i = 0; i < n; ++i) {
    const int r = position[i];
    for (index_t e = A.row_ptr[i]; e < A.row_ptr[i + 1]; ++e) {
      const int c = position[A.col_idx[e]];
      if (c == r) {
        diag_source_[r] = static_cast<int>(e);
      } else if (c < r) {  // L(r, c): find row r in column c
        const auto first = row_.begin() + col_ptr_[c], last = row_.begin() + col_ptr_[c + 1];
        value_source_[std::lower_bound(first, last, r) - row_.begin()] = static_cast<int>(e);
      }
    }
  }
  n_ = n;
  diag_.assign(n, 0.0);
  value_.assign(row_.size(), 0.0);
  link_.assign(n, -1);
  first_.assign(n, 0);
  temp_.assign(n, 0.0);
}

bool SparseCholesky::factorize(const CsrMatrix<double>& A, int* failed_row, double shift) {
  // 0.0 + a, as the sum into a cleared array this replaces (-0.0 becomes 0.0): the same bits.
  const double* a = A.values.data();
  for (int k = 0; k < n_; ++k) {
    const int source = diag_source_[k];
    diag_[k] = source >= 0 ? 0.0 + a[source] : 0.0;
  }
  if (shift > 0)
    for (double& d : diag_) d += shift * std::abs(d);
  for (std::size_t e = 0; e < value_.size(); ++e) {
    const int source = value_source_[e];
    value_[e] = source >= 0 ? 0.0 + a[source] : 0.0;
  }
  std::fill(link_.begin(), link_.end(), -1);
  // temp_ is all zero here: each column's updates are cleared where they are used (below).

  // Column j is computed from the columns k < j with a nonzero in row j. Each such column waits
  // in a list (link_) headed by the next row it updates; first_[k] is that entry. The lists are
  // last in, first out, as linsolve's: the order of the sums below is EPANET's.
  for (int j = 0; j < n_; ++j) {
    double diag_update = 0.0;
    int k = link_[j];
    while (k >= 0) {
      const int next = link_[k];
      const int kfirst = first_[k];
      const double ljk = value_[kfirst];
      diag_update += ljk * ljk;
      const int start = kfirst + 1, stop = col_ptr_[k + 1];
      if (start < stop) {
        first_[k] = start;
        const int row = row_[start];
        link_[k] = link_[row];
        link_[row] = k;
        for (int e = start; e < stop; ++e) temp_[row_[e]] += value_[e] * ljk;
      }
      k = next;
    }
    double pivot = diag_[j] - diag_update;
    if (!(pivot > 0.0)) {  // EPANET's test, pivot <= 0, and NaN
      if (failed_row) *failed_row = order_[j];
      std::fill(temp_.begin(), temp_.end(), 0.0);  // the updates left uncleared, for the next
      return false;
    }
    pivot = std::sqrt(pivot);
    diag_[j] = pivot;
    const int start = col_ptr_[j], stop = col_ptr_[j + 1];
    if (start < stop) {
      first_[j] = start;
      const int row = row_[start];
      link_[j] = link_[row];
      link_[row] = j;
      for (int e = start; e < stop; ++e) {
        const int r = row_[e];
        value_[e] = (value_[e] - temp_[r]) / pivot;
        temp_[r] = 0.0;
      }
    }
  }
  return true;
}

void SparseCholesky::solve(const std::vector<double>& b, std::vector<double>& x) {
  rhs_.resize(n_);
  for (int k = 0; k < n_; ++k) rhs_[k] = b[order_[k]];
  // L y = b by columns, then L^T x = y by rows of L^T (columns of L), as linsolve.
  for (int j = 0; j < n_; ++j) {
    const double bj = rhs_[j] / diag_[j];
    rhs_[j] = bj;
    for (int e = col_ptr_[j]; e < col_ptr_[j + 1]; ++e) rhs_[row_[e]] -= value_[e] * bj;
  }
  for (int j = n_ - 1; j >= 0; --j) {
    double bj = rhs_[j];
    for (int e = col_ptr_[j]; e < col_ptr_[j + 1]; ++e) bj -= value_[e] * rhs_[row_[e]];
    rhs_[j] = bj / diag_[j];
  }
  x.resize(n_);
  for (int k = 0; k < n_; ++k) x[order_[k]] = rhs_[k];
}

std::vector<int> minimum_degree_order(const CsrMatrix<double>& A) {
  const Eigen::Index n = A.rows;
  Eigen::Map<const Eigen::SparseMatrix<double, Eigen::RowMajor, int>> view(
      n, n, A.nnz(), A.row_ptr.data(), A.col_idx.data(), A.values.data());
  Eigen::SparseMatrix<double, Eigen::ColMajor, int> M = view;
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> P;
  Eigen::AMDOrdering<int> amd;
  amd(M.selfadjointView<Eigen::Lower>(), P);
  // CSparse's AMD, as Eigen runs it: P.indices()[k] is the row eliminated k-th.
  return std::vector<int>(P.indices().data(), P.indices().data() + n);
}

}  // namespace cgs::precond
