#include "solver/precond/sparse_parts.hpp"

#include <algorithm>

#include "formats/types.hpp"

namespace cgs::precond {

CsrMatrix<double> triangle(const CsrMatrix<double>& A, bool lower) {
  CsrMatrix<double> L;
  L.rows = A.rows;
  L.cols = A.cols;
  L.row_ptr.assign(std::size_t(A.rows) + 1, 0);
  for (index_t i = 0; i < A.rows; ++i) {
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const index_t j = A.col_idx[k];
      if (lower ? j <= i : j >= i) {
        L.col_idx.push_back(j);
        L.values.push_back(A.values[k]);
      }
    }
    L.row_ptr[i + 1] = index_t(L.col_idx.size());
  }
  return L;
}

SplitTriangle split_diagonal(const CsrMatrix<double>& L) {
  SplitTriangle s;
  s.off.rows = L.rows;
  s.off.cols = L.cols;
  s.off.row_ptr.assign(std::size_t(L.rows) + 1, 0);
  s.diagonal.assign(std::size_t(L.rows), 0.0);
  for (index_t i = 0; i < L.rows; ++i) {
    for (index_t k = L.row_ptr[i]; k < L.row_ptr[i + 1]; ++k) {
      if (L.col_idx[k] == i) {
        s.diagonal[i] = L.values[k];
      } else {
        s.off.col_idx.push_back(L.col_idx[k]);
        s.off.values.push_back(L.values[k]);
      }
    }
    s.off.row_ptr[i + 1] = index_t(s.off.col_idx.size());
  }
  return s;
}

std::vector<std::vector<index_t>> level_sets(const CsrMatrix<double>& S, bool lower) {
  const index_t n = S.rows;
  std::vector<index_t> level(std::size_t(n), 0);
  index_t levels = 0;
  for (index_t step = 0; step < n; ++step) {
    const index_t i = lower ? step : n - 1 - step;
    index_t l = 0;
    for (index_t k = S.row_ptr[i]; k < S.row_ptr[i + 1]; ++k)
      l = std::max(l, level[S.col_idx[k]] + 1);
    level[i] = l;
    levels = std::max(levels, l + 1);
  }
  std::vector<std::vector<index_t>> sets(static_cast<std::size_t>(levels));
  for (index_t step = 0; step < n; ++step) {
    const index_t i = lower ? step : n - 1 - step;
    sets[level[i]].push_back(i);
  }
  return sets;
}

Transposed transpose_with_map(const CsrMatrix<double>& A) {
  Transposed t;
  CsrMatrix<double>& At = t.At;
  At.rows = A.cols;
  At.cols = A.rows;
  At.row_ptr.assign(std::size_t(A.cols) + 1, 0);
  for (index_t j : A.col_idx) ++At.row_ptr[j + 1];
  for (index_t j = 0; j < A.cols; ++j) At.row_ptr[j + 1] += At.row_ptr[j];
  At.col_idx.resize(A.col_idx.size());
  At.values.resize(A.values.size());
  t.position.resize(A.values.size());
  std::vector<index_t> next(At.row_ptr.begin(), At.row_ptr.end() - 1);
  for (index_t i = 0; i < A.rows; ++i) {  // rows in order: columns of At come out sorted
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const index_t at = next[A.col_idx[k]]++;
      At.col_idx[at] = i;
      At.values[at] = A.values[k];
      t.position[k] = at;
    }
  }
  return t;
}

}  // namespace cgs::precond
