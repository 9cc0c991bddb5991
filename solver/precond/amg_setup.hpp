// The set-up phases of smoothed-aggregation AMG (Vanek, Mandel, Brezina 1996), each a function
// over plain CSR arrays so that a GPU set-up can replace them one by one:
//   strength of connection   strong_connections
//   aggregation              greedy_aggregate (Vanek's passes), or mis2_aggregate (MIS(2)
//                            roots, Bell, Dalton, Olson 2012: parallel)
//   prolongator              prolongator_pattern (tentative P's columns, smoothed P's pattern)
//                            smooth_prolongator  (P = (I - omega D_F^-1 A_F) T, numbers only)
//   restriction              R = P^T (transpose_with_map, sparse_parts.hpp)
//   Galerkin operator        galerkin_product (R A P, pattern and values in one pass) on the
//                            first set-up, galerkin_values (numeric, on its pattern) after;
//                            galerkin_pattern, the symbolic pass alone, for a GPU's two passes
// Each pattern function runs once per pattern (analyze); each values function again at every
// set_values, on the same patterns. Everything runs on every host core and is deterministic:
// the same matrix gives the same hierarchy bit for bit, whatever the thread count.
#pragma once

#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/amg_aggregate.hpp"
#include "solver/precond/amg_gpu.hpp"
#include "solver/precond/amg_hierarchy.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/spectrum.hpp"

namespace cgs::precond::amg {

// The diagonal of the filtered matrix A_F (A's strong entries, the weak ones lumped onto the
// diagonal so that row sums are kept): a_ii + sum of the row's weak entries, or a_ii where that
// sum is not positive.
std::vector<double> filtered_diagonal(const CsrMatrix<double>& A, const std::vector<char>& strong);

// A_F itself on A's pattern (weak entries zero): what the spectral radius is estimated on.
CsrMatrix<double> filtered_matrix(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                  const std::vector<double>& diagonal);

Prolongator prolongator_pattern(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                const Aggregates& aggregates);

// P = (I - omega D_F^-1 A_F) T, T the tentative prolongator (T_iJ = weight_J where row i is in
// aggregate J), on the pattern prolongator_pattern made (p.position says which entries of A
// are strong), diagonal = filtered_diagonal(A, strong).
void smooth_prolongator(const CsrMatrix<double>& A, const Aggregates& aggregates,
                        const std::vector<double>& diagonal, double omega, Prolongator& p);

// R A P for R = P^T: the pattern (values zero), then the values on that pattern. Row by row over
// the coarse rows, each by one thread in a fixed order (so bit for bit reproducible). The first
// set-up takes galerkin_product, pattern and values in one pass (a third of the work of the two
// apart, the same values bit for bit); set_values takes galerkin_values on its pattern. Where
// A's rows are long (more than 8 entries on average: the coarse levels, 30 a row in 3-D), both
// form A P first and then R (A P): each A entry's product with a P row made once, not again for
// each aggregate its row reaches (poisson3d:100's second level, one thread: 0.73 -> 0.28 s);
// on short rows (Poisson's finest levels) the three-factor pass without a stored A P is faster.
CsrMatrix<double> galerkin_pattern(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                                   const CsrMatrix<double>& P);
void galerkin_values(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                     const CsrMatrix<double>& P, CsrMatrix<double>& Ac);
CsrMatrix<double> galerkin_product(const CsrMatrix<double>& R, const CsrMatrix<double>& A,
                                   const CsrMatrix<double>& P);
// X Y, pattern and values (each entry summed in X's and then Y's row order, so the same bits
// whatever the thread count): galerkin_product's two steps. Each row's columns ascend, or with
// sorted_rows false come in the order first reached (deterministic too; for A P, which no one
// reads by column).
CsrMatrix<double> sparse_product(const CsrMatrix<double>& X, const CsrMatrix<double>& Y,
                                 bool sorted_rows = true);

// The whole hierarchy of A: patterns and values, level by level until a level has `coarse` rows
// or fewer, `max_levels` are made, or aggregation no longer coarsens.
Hierarchy build_hierarchy(const CsrMatrix<double>& A, const HierarchyOptions& options);
// New values of A on the same pattern: every level's numbers again (spectra, P, R, R A P) on
// the patterns and aggregates build_hierarchy made. Equal to build_hierarchy(A) bit for bit
// wherever A's strong couplings are the same ones.
void refresh_hierarchy(Hierarchy& h, const CsrMatrix<double>& A, const HierarchyOptions& options);

// sum of nonzeros over all levels / nonzeros of A (the memory and the work of a V-cycle).
double operator_complexity(const Hierarchy& h, const CsrMatrix<double>& A);

}  // namespace cgs::precond::amg
