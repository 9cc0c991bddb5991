// Pieces of sparse matrices the preconditioners' set-ups share: the lower triangle, a
// triangle without its diagonal, the level sets of a triangular solve, and a transpose that
// remembers where each entry went (so new values are moved without another symbolic pass).
#pragma once

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
template <typename T>
std::vector<T> cast_to(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

}  // namespace cgs::precond
