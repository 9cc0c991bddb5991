#include "formats/row_order.hpp"

#include <algorithm>
#include <numeric>

#include "formats/convert.hpp"

namespace cgs {

template <typename T>
std::vector<T> RowPermutation::to_new(const std::vector<T>& original) const {
  std::vector<T> permuted(original.size());
  for (std::size_t k = 0; k < new_to_old.size(); ++k) permuted[k] = original[new_to_old[k]];
  return permuted;
}

template <typename T>
std::vector<T> RowPermutation::to_original(const std::vector<T>& permuted) const {
  std::vector<T> original(permuted.size());
  for (std::size_t k = 0; k < new_to_old.size(); ++k) original[new_to_old[k]] = permuted[k];
  return original;
}

template <typename T>
RowPermutation sort_rows_by_length(const CsrMatrix<T>& A) {
  RowPermutation P;
  P.new_to_old.resize(A.rows);
  std::iota(P.new_to_old.begin(), P.new_to_old.end(), 0);
  std::stable_sort(P.new_to_old.begin(), P.new_to_old.end(),
                   [&](index_t a, index_t b) { return A.row_length(a) > A.row_length(b); });
  return P;
}

template <typename T>
CsrMatrix<T> permute_symmetric(const CsrMatrix<T>& A, const RowPermutation& P) {
  if (A.rows != A.cols)
    throw InputError("a symmetric row permutation needs a square matrix, got " +
                     std::to_string(A.rows) + " x " + std::to_string(A.cols));
  std::vector<index_t> old_to_new(A.rows);
  for (index_t k = 0; k < A.rows; ++k) old_to_new[P.new_to_old[k]] = k;

  CsrMatrix<T> B;
  B.rows = B.cols = A.rows;
  B.row_ptr.assign(std::size_t(A.rows) + 1, 0);
  B.col_idx.resize(A.col_idx.size());
  B.values.resize(A.values.size());
  std::vector<std::pair<index_t, T>> row;
  for (index_t k = 0; k < A.rows; ++k) {
    const index_t old = P.new_to_old[k];
    row.clear();
    for (index_t e = A.row_ptr[old]; e < A.row_ptr[old + 1]; ++e)
      row.emplace_back(old_to_new[A.col_idx[e]], A.values[e]);
    std::sort(row.begin(), row.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    B.row_ptr[k + 1] = B.row_ptr[k] + static_cast<index_t>(row.size());
    for (std::size_t j = 0; j < row.size(); ++j) {
      B.col_idx[B.row_ptr[k] + j] = row[j].first;
      B.values[B.row_ptr[k] + j] = row[j].second;
    }
  }
  return B;
}

template std::vector<float> RowPermutation::to_new(const std::vector<float>&) const;
template std::vector<double> RowPermutation::to_new(const std::vector<double>&) const;
template std::vector<float> RowPermutation::to_original(const std::vector<float>&) const;
template std::vector<double> RowPermutation::to_original(const std::vector<double>&) const;
template RowPermutation sort_rows_by_length(const CsrMatrix<float>&);
template RowPermutation sort_rows_by_length(const CsrMatrix<double>&);
template CsrMatrix<float> permute_symmetric(const CsrMatrix<float>&, const RowPermutation&);
template CsrMatrix<double> permute_symmetric(const CsrMatrix<double>&, const RowPermutation&);

}  // namespace cgs
