// Smoothed aggregation with a near-nullspace (Vanek, Mandel, Brezina 1996; amgcl's
// tentative_prolongation, ML's and PETSc GAMG's rigid-body modes): the pieces amg_setup.cpp puts
// together where HierarchyOptions::nullspace is set.
//   where it comes from   rigid_body_modes (coordinates), translation_modes (block size alone),
//                         load_near_nullspace (`amg:nullspace=FILE`, `coords=FILE`, `block=B`)
//   strength by nodes     node_strength: the node matrix of block norms, its strong couplings,
//                         and A's entries strong where their nodes' coupling is (or in one node)
//   aggregation by nodes  dof_aggregates: a node's aggregate for each of its rows
//   tentative P           tentative_prolongator: per aggregate the QR of B's rows there,
//                         T = Q, B_coarse = R (so T B_coarse = B); columns up to the aggregate's
//                         rank (a lone 3-D node holds 3 of the 6 rigid-body modes)
//   smoothed P            nullspace_prolongator_pattern / smooth_tentative:
//                         P = (I - omega D_F^-1 A_F) T on a pattern fixed at the first set-up
// All on the host, deterministic (the same bits whatever the thread count).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/amg_hierarchy.hpp"

namespace cgs::precond::amg {

// Rigid-body modes of nodes x dim coordinates (row by row), dim 2 (3 modes: two translations,
// one rotation) or 3 (6), rows interleaved by node (node p's dofs p dim .. p dim + dim - 1).
// The rotations are about the coordinates' centroid (better scaled columns, the same span).
NearNullspace rigid_body_modes(const std::vector<double>& coords, int dim);

// The block's translations: column c is 1 on the rows i with i % block == c (block = 1: the
// constant vector), node of row i: i / block.
NearNullspace translation_modes(index_t rows, int block);

// What `amg:nullspace=FILE`, `coords=FILE|gen:elasticity2d:M|gen:elasticity3d:M` and `block=B`
// ask for on a matrix of `rows` rows; null when none of them is given. InputError naming the
// file, the line and the problem: a row count that does not fit, a dimension other than 2 or 3,
// a block that does not divide the rows, NaN (the reader's), linearly dependent columns.
std::shared_ptr<const NearNullspace> load_near_nullspace(const std::string& nullspace_file,
                                                         const std::string& coords,
                                                         int block, index_t rows);

// InputError (naming `where`) unless B's columns are linearly independent, each scaled to unit
// norm first (so that their sizes do not decide): a zero column, or a rank below cols.
void check_independent_columns(const NearNullspace& ns, const std::string& where);

// Strength by nodes: the node matrix C (c_IJ = the Frobenius norm of A's block (I, J)), the
// strong couplings of C at theta, and per entry of A whether it is strong: its nodes' coupling
// is, or both rows are of one node (off the diagonal).
struct NodeStrength {
  CsrMatrix<double> C;
  std::vector<char> strong_nodes;  // per entry of C
  std::vector<char> strong;        // per entry of A
};
NodeStrength node_strength(const CsrMatrix<double>& A, const NearNullspace& ns, double theta);

// Each row in its node's aggregate (-1 where the node has none).
Aggregates dof_aggregates(const Aggregates& nodes, const NearNullspace& ns);

// T and the coarse level's near-nullspace (its nodes: the aggregates, each with the rank of B
// on it as its rows). T's rows outside every aggregate are empty.
struct Tentative {
  CsrMatrix<double> T;
  NearNullspace coarse;
};
Tentative tentative_prolongator(const Aggregates& aggregates, const NearNullspace& ns);

// The smoothed P's pattern: the columns of T's row i and of T's rows j for A's diagonal and
// strong entries (i, j), the pattern of T + A_F T made without the product (each T row is one
// aggregate's contiguous columns); values zero.
CsrMatrix<double> nullspace_prolongator_pattern(const CsrMatrix<double>& A,
                                                const std::vector<char>& strong,
                                                const CsrMatrix<double>& T);
// P = T - omega D_F^-1 A_F T on that pattern (diagonal: filtered_diagonal(A, strong)), A_F's
// entries read from A through `strong` (no copy of A_F, no stored A_F T).
void smooth_tentative(const CsrMatrix<double>& A, const std::vector<char>& strong,
                      const std::vector<double>& diagonal, double omega,
                      const CsrMatrix<double>& T, CsrMatrix<double>& P);

}  // namespace cgs::precond::amg
