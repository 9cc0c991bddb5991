// Pieces of sparse matrices the preconditioners' set-ups share: the lower triangle, a
// triangle without its diagonal, the level sets of a triangular solve, and a transpose that
// remembers where each entry went (so new values are moved without another symbolic pass).
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>
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

// Rows grouped by level for a triangular solve: a row's level is one past the highest level of
// the rows it reads, so the rows of one level are independent of each other. One flat array and
// its offsets (a vector per level was 12,000 allocations and a second copy on a 9M-row grid).
struct LevelSchedule {
  std::vector<index_t> rows;   // level by level
  std::vector<index_t> start;  // level l is rows[start[l]] .. rows[start[l + 1] - 1]
  index_t levels() const { return start.empty() ? 0 : index_t(start.size()) - 1; }
  index_t size(index_t l) const { return start[std::size_t(l) + 1] - start[std::size_t(l)]; }
  const index_t* level(index_t l) const { return rows.data() + start[std::size_t(l)]; }
};

// The levels of the two solves with L = tril(A), read from A's entries below the diagonal only
// (the entries above it are ignored): forward, L y = r, a row reads its columns j < i, rows of
// a level ascending; backward, L^T z = y, row j reads the rows i > j with an entry (i, j), rows of
// a level descending. Each is one pass over the rows (a level number per row) and a counting sort.
LevelSchedule forward_levels(const CsrMatrix<double>& A);
LevelSchedule backward_levels(const CsrMatrix<double>& A);
// Both (forward, backward), the two passes side by side.
std::pair<LevelSchedule, LevelSchedule> solve_levels(const CsrMatrix<double>& A);
// The schedules of given level numbers (level[i] < levels): rows of a level ascending (forward)
// or descending (backward), as the functions above give them.
LevelSchedule forward_schedule(const std::vector<index_t>& level, index_t levels);
LevelSchedule backward_schedule(const std::vector<index_t>& level, index_t levels);

// The transpose of A, and for every entry k of A its position in the transpose.
struct Transposed {
  CsrMatrix<double> At;
  std::vector<index_t> position;  // A.values[k] is At.values[position[k]]
};
Transposed transpose_with_map(const CsrMatrix<double>& A);

// The entries of A strictly below (lower = true) or above its diagonal, in A's row order.
CsrMatrix<double> strictly_triangle(const CsrMatrix<double>& A, bool lower);

// The pattern of L^T for L = strictly_triangle(A, true), read off A's strictly upper part, when
// A's pattern is symmetric (each entry of L^T has its mirror in L, as many entries); nullopt
// when it is not. No map from L's entries to L^T's: gather_mirrored_values finds each by a
// binary search in its mirror's row, on every core (transpose_with_map keeps team x columns of
// counts, 576 MB for a 9M-row grid on 16 threads, and its map is 72 MB more).
std::optional<CsrMatrix<double>> mirrored_upper(const CsrMatrix<double>& A,
                                                const CsrMatrix<double>& L);
// U's values from L's: U(j, i) = L(i, j), for U = *mirrored_upper(A, L).
void gather_mirrored_values(const CsrMatrix<double>& L, CsrMatrix<double>& U);

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
