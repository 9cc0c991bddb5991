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

// Whether A's own row order already numbers its graph as a wavefront from row 0: row 0 is the
// only row without a neighbour before it, and every row's earlier neighbours all lie on one level
// of the forward triangular solve (so every entry joins two consecutive levels, and a row's level
// is its breadth-first distance from row 0). A 5-point or 7-point grid in its natural order is
// one. Cuthill-McKee from a corner numbers the same wavefronts, so IC(0) meets the same
// dependencies in either order (each row's earlier neighbours the same, or from the opposite
// corner their mirror image): the same number of levels and the same iterations (measured), and
// reverse Cuthill-McKee has nothing to gain. One pass, stopping at the first row that breaks it.
template <typename T>
bool is_wavefront_order(const CsrMatrix<T>& A);

// P A P^T: row and column k of the result are row and column new_to_old[k] of A.
template <typename T>
CsrMatrix<T> permute_symmetric(const CsrMatrix<T>& A, const RowPermutation& P);

// A's pattern with its entries' numbers 0, 1, ... as values: permuted, they say where each entry
// came from (exact in double below 2^53).
CsrMatrix<double> numbered_entries(const CsrMatrix<double>& A);

}  // namespace cgs
