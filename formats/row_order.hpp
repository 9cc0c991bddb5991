// Sorting rows by length, and the reverse Cuthill-McKee ordering.
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

// Reverse Cuthill-McKee: a breadth-first numbering from a pseudo-peripheral row of each
// connected part (neighbours by increasing degree), reversed. Rows that share entries get
// nearby numbers, so a row's columns lie close to it: the vector entries a product gathers
// come from a few cache lines, and the threads of a team (each owning a block of rows) read
// little of what the others wrote. EPANET numbers junctions in input order, which scatters
// them (Exnet: the 2-thread fused CPU loop was 2.5x slower than 1 thread in file order).
template <typename T>
RowPermutation reverse_cuthill_mckee(const CsrMatrix<T>& A);

// P A P^T: row and column k of the result are row and column new_to_old[k] of A.
template <typename T>
CsrMatrix<T> permute_symmetric(const CsrMatrix<T>& A, const RowPermutation& P);

}  // namespace cgs
