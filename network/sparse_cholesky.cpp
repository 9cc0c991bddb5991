#include "network/sparse_cholesky.hpp"

#include <Eigen/OrderingMethods>
#include <Eigen/SparseCore>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace cgs::net {
namespace {

constexpr int kIgnored = std::numeric_limits<int>::min();

}  // namespace

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

  // Where each entry of A goes: the lower triangle in elimination order, once.
  slot_.assign(A.nnz(), kIgnored);
  for (int i = 0; i < n; ++i) {
    const int r = position[i];
    for (index_t e = A.row_ptr[i]; e < A.row_ptr[i + 1]; ++e) {
      const int c = position[A.col_idx[e]];
      if (c == r) {
        slot_[e] = -1 - r;
      } else if (c < r) {  // L(r, c): find row r in column c
        const auto first = row_.begin() + col_ptr_[c], last = row_.begin() + col_ptr_[c + 1];
        slot_[e] = static_cast<int>(std::lower_bound(first, last, r) - row_.begin());
      }
    }
  }
  diag_source_.assign(n, -1);
  value_source_.assign(row_.size(), -1);
  for (std::size_t e = 0; e < slot_.size(); ++e) {
    const int s = slot_[e];
    if (s == kIgnored) continue;
    int& source = s < 0 ? diag_source_[-1 - s] : value_source_[s];
    if (source >= 0) throw std::logic_error("sparse Cholesky: two entries of A in one slot");
    source = static_cast<int>(e);
  }
  n_ = n;
  diag_.assign(n, 0.0);
  value_.assign(row_.size(), 0.0);
  link_.assign(n, -1);
  first_.assign(n, 0);
  temp_.assign(n, 0.0);
}

bool SparseCholesky::factorize(const CsrMatrix<double>& A, int* failed_row) {
  // 0.0 + a, as the sum into a cleared L was: a -0.0 of A becomes +0.0 there too.
  const double* a = A.values.data();
  for (int k = 0; k < n_; ++k) {
    const int e = diag_source_[k];
    diag_[k] = e >= 0 ? 0.0 + a[e] : 0.0;
  }
  const std::size_t nv = value_.size();
  for (std::size_t s = 0; s < nv; ++s) {
    const int e = value_source_[s];
    value_[s] = e >= 0 ? 0.0 + a[e] : 0.0;
  }
  std::fill(link_.begin(), link_.end(), -1);

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
      std::fill(temp_.begin(), temp_.end(), 0.0);  // columns after j would have cleared it
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

}  // namespace cgs::net
