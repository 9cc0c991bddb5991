// Smoothed aggregation's host aggregation primitives (amg_setup.hpp's strength and aggregation
// phases): strength of connection, the greedy passes (Vanek, Mandel, Brezina 1996), the greedy
// by row blocks, and MIS(2) aggregation (Bell, Dalton, Olson 2012), the reference of the
// device's (amg_gpu.hpp). Everything runs on every host core where worth it and is
// deterministic: the same aggregates whatever the thread count.
#pragma once

#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/amg_hierarchy.hpp"  // Aggregates, kGreedyTie

namespace cgs::precond::amg {

// A's diagonal (zero where a row has none).
std::vector<double> diagonal_of(const CsrMatrix<double>& A);

// Per entry of A: 1 where j != i and |a_ij| >= theta sqrt(|a_ii a_jj|) (the strong couplings),
// else 0 (the diagonal and the weak couplings).
std::vector<char> strong_connections(const CsrMatrix<double>& A, double theta);

// Greedy aggregation (Vanek, Mandel, Brezina 1996, the three passes): rows in order, a row
// whose strong neighbours are all free forms an aggregate with them; rows left join their
// strongest aggregated neighbour; rows still left start aggregates with their free neighbours.
// Sequential (one pass over A), deterministic, and on grids regular aggregates: on the 5-point
// Poisson problem CG needs 10-11 iterations from 250k to 1M rows where MIS(2) needs 17-24.
Aggregates greedy_aggregate(const CsrMatrix<double>& A, const std::vector<char>& strong);
// The greedy's passes one by one, for a set-up that runs pass 2 where A's values are
// (GpuLevelValues::join_strongest, a GPU set-up's coarse level whose values stayed there):
//   greedy_roots               pass 1: each root and its strong neighbours, other rows -1
//   join_strongest             pass 2: each row without an aggregate in `first` joins its
//                              strongest neighbour's there (the first on ties, and on
//                              near-ties within kGreedyTie); rows read `first` only
//   start_leftover_aggregates  pass 3: in row order, a row still without one starts an
//                              aggregate with its strong neighbours that have none
Aggregates greedy_roots(const CsrMatrix<double>& A, const std::vector<char>& strong);
void join_strongest(const CsrMatrix<double>& A, const std::vector<char>& strong,
                    const std::vector<index_t>& first, std::vector<index_t>& of);
void start_leftover_aggregates(const CsrMatrix<double>& A, const std::vector<char>& strong,
                               Aggregates& g);

// Aggregation by a distance-2 maximal independent set of the strong graph: its rows are the
// roots (random priorities from a fixed hash, so rounds run in parallel and the result is
// deterministic), each root's strong neighbours join it, and the rows two steps away join the
// aggregate of their strongest aggregated neighbour. Assumes the strong graph is symmetric (A
// symmetric); a row left over all the same becomes an aggregate of its own. Parallel in every
// step (the GPU's candidate), but its irregular aggregates cost iterations (see above).
Aggregates mis2_aggregate(const CsrMatrix<double>& A, const std::vector<char>& strong);

// The greedy's passes on all host cores: pass 1 runs by blocks of block_rows consecutive rows,
// the even blocks at once and then the odd ones, each block the greedy over its own rows (a root
// may claim a row of the next block only if all that row's strong neighbours lie next to the
// root's block, so that blocks of one parity never share a row; rows left join in pass 2); pass 2
// in parallel, pass 3 as the greedy's. Equal to greedy_aggregate with one block (block_rows >=
// n), and the same aggregates whatever the thread count. The blocks' seams cost iterations
// where blocks are small: the 5-point Poisson problem at 2000^2 takes 12 with 262144-row blocks
// (16) against the greedy's 9, and 9 with 2^20-row blocks (4); at 1000^2 65536-row blocks take
// 11 against 8 (BENCHMARKS 20f). greedy_block_rows(n): max(2^20, n / 32), so 9 blocks at 9M
// rows (5 at once, then 4) and the greedy itself below 2^20 rows. Assumes A's strong graph
// symmetric.
Aggregates blocked_greedy_aggregate(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                    index_t block_rows);
index_t greedy_block_rows(index_t n);

}  // namespace cgs::precond::amg
