// Sorting rows by length.
//
// We apply the permutation symmetrically, once, before the solve: A' = P A P^T, b' = P b, and
// x = P^T x' at the end. A' is SPD whenever A is, so CG runs unchanged on A' and every CG vector
// stays contiguous: no per-iteration gather or scatter, and kernels write y coalesced. The
// alternative (write y[perm[i]] inside the kernel, x left unpermuted) keeps the column locality
// of x but scatters every write of y and needs every vector operation to agree on the order.
#pragma once

#include <vector>

#include "formats/csr.hpp"

namespace cgs {

// new_to_old[k] is the original index of the row placed k-th.
struct RowPermutation {
  std::vector<index_t> new_to_old;

  bool empty() const { return new_to_old.empty(); }
  template <typename T>
  std::vector<T> to_new(const std::vector<T>& original) const;  // v'[k] = v[new_to_old[k]]
  template <typename T>
  std::vector<T> to_original(const std::vector<T>& permuted) const;  // inverse
};

// Descending row length, stable (ties keep their original order).
template <typename T>
RowPermutation sort_rows_by_length(const CsrMatrix<T>& A);

// P A P^T: row and column k of the result are row and column new_to_old[k] of A.
template <typename T>
CsrMatrix<T> permute_symmetric(const CsrMatrix<T>& A, const RowPermutation& P);

}  // namespace cgs
