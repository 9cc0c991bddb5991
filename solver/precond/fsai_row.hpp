// One row of FSAI's device set-up (solver/precond/fsai_gpu.cu), written once for the device's
// kernels and for the host, so that a CPU test runs the kernels' own row code on every row of
// its matrices against fsai_pattern and fsai_rows (solver/precond/fsai.hpp): a pattern row in a
// small sorted set, and a row of G with A[p,p]'s lower triangle packed in a small local array.
#pragma once

#include <cmath>

#include "formats/types.hpp"
#include "solver/cg_step.hpp"  // CGS_HD

namespace cgs::precond {

inline constexpr int kFsaiDeviceRowMax = 32;  // longer pattern rows: made on the host
inline constexpr int kFsaiRowTooLong = -1;    // fsai_small_pattern: past kFsaiDeviceRowMax

// Inserts column c into the sorted, duplicate-free set[0..size); false when the set is full
// and c is new.
CGS_HD bool fsai_insert_sorted(index_t* set, int& size, index_t c) {
  int at = size;
  while (at > 0 && set[at - 1] > c) --at;
  if (at > 0 && set[at - 1] == c) return true;
  if (size == kFsaiDeviceRowMax) return false;
  for (int q = size; q > at; --q) set[q] = set[q - 1];
  set[at] = c;
  ++size;
  return true;
}

// Row i's pattern as fsai_row_pattern makes it, for k = 1 or 2, into set[0..kFsaiDeviceRowMax):
// {i}, the columns <= i of row i, and for k = 2 the columns <= i of the rows c != i that row i
// reaches. Its size, or kFsaiRowTooLong.
CGS_HD int fsai_small_pattern(const index_t* a_ptr, const index_t* a_cols, index_t i, int k,
                              index_t* set) {
  int size = 0;
  fsai_insert_sorted(set, size, i);
  for (index_t e = a_ptr[i]; e < a_ptr[i + 1]; ++e) {
    const index_t c = a_cols[e];
    if (c <= i && !fsai_insert_sorted(set, size, c)) return kFsaiRowTooLong;
    if (k < 2 || c == i) continue;
    for (index_t f = a_ptr[c]; f < a_ptr[c + 1]; ++f)
      if (a_cols[f] <= i && !fsai_insert_sorted(set, size, a_cols[f])) return kFsaiRowTooLong;
  }
  return size;
}

// G's row on pattern p (m entries, sorted, ending with the row's diagonal) into g: fsai_row's
// arithmetic in its order, A[p,p]'s lower triangle packed by rows in L (m(m+1)/2 doubles).
// False when the block is not positive definite (a pivot <= 0, NaN or infinite).
CGS_HD bool fsai_small_row(const index_t* a_ptr, const index_t* a_cols, const double* a_values,
                           const index_t* p, int m, double* L, double* g) {
  auto at = [L](int r, int c) -> double& { return L[r * (r + 1) / 2 + c]; };
  for (int t = 0; t < m * (m + 1) / 2; ++t) L[t] = 0;
  for (int a = 0; a < m; ++a) {  // gather, merging A's sorted row with the sorted pattern
    int b = 0;
    for (index_t e = a_ptr[p[a]]; e < a_ptr[p[a] + 1] && b <= a; ++e) {
      const index_t c = a_cols[e];
      while (b <= a && p[b] < c) ++b;
      if (b <= a && p[b] == c) at(a, b) = a_values[e];
    }
  }
  for (int c = 0; c < m; ++c) {  // Cholesky, column by column
    double pivot = at(c, c);
    for (int q = 0; q < c; ++q) pivot -= at(c, q) * at(c, q);
    if (!(pivot > 0 && pivot <= 1.7976931348623157e308)) return false;  // also NaN and +inf
    const double d = sqrt(pivot);
    at(c, c) = d;
    for (int r = c + 1; r < m; ++r) {
      double v = at(r, c);
      for (int q = 0; q < c; ++q) v -= at(r, q) * at(c, q);
      at(r, c) = v / d;
    }
  }
  for (int r = m - 1; r >= 0; --r) {  // L^T g = e_m, from the last row up
    double v = r == m - 1 ? 1.0 : 0.0;
    for (int q = r + 1; q < m; ++q) v -= at(q, r) * g[q];
    g[r] = v / at(r, r);
  }
  return true;
}

}  // namespace cgs::precond
