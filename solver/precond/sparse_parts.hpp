// Pieces of sparse matrices the preconditioners' set-ups share: the lower triangle, a
// triangle without its diagonal, the level sets of a triangular solve, and a transpose that
// remembers where each entry went (so new values are moved without another symbolic pass).
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "formats/csr.hpp"

namespace cgs::precond {

// The entries of A with column <= row (lower = true) or >= row, in A's row order.
CsrMatrix<double> triangle(const CsrMatrix<double>& A, bool lower);

// The pattern of a triangle (sorted columns, diagonal present in every row) without its
// diagonal, and the diagonal: what a triangular_level operation reads (S and 1/diag).
struct SplitTriangle {
  CsrMatrix<double> off;  // the off-diagonal entries
  std::vector<double> diagonal;
};
SplitTriangle split_diagonal(const CsrMatrix<double>& L);

// Rows grouped by level for a triangular solve with S (the off-diagonal part of a triangle):
// a row's level is one past the highest level of the rows it reads, so the rows of one level
// are independent of each other. Lower: rows read lower-numbered rows; upper: higher ones.
std::vector<std::vector<index_t>> level_sets(const CsrMatrix<double>& S, bool lower);

// The transpose of A, and for every entry k of A its position in the transpose.
struct Transposed {
  CsrMatrix<double> At;
  std::vector<index_t> position;  // A.values[k] is At.values[position[k]]
};
Transposed transpose_with_map(const CsrMatrix<double>& A);

// Values of one matrix cast to T.
// On every host core when large (a 9M-row grid's program arrays are 45M entries).
template <typename T>
std::vector<T> cast_to(const std::vector<double>& v) {
  if constexpr (std::is_same_v<T, double>) {
    if (v.size() <= 1000000) return v;
  }
  std::vector<T> out(v.size());
  const std::int64_t n = std::int64_t(v.size());
#pragma omp parallel for schedule(static) if (n > 1000000)
  for (std::int64_t k = 0; k < n; ++k) out[std::size_t(k)] = T(v[std::size_t(k)]);
  return out;
}

}  // namespace cgs::precond
