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

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/amg_gpu.hpp"
#include "solver/precond/sparse_parts.hpp"
#include "solver/precond/spectrum.hpp"

namespace cgs::precond::amg {

// Per entry of A: 1 where j != i and |a_ij| >= theta sqrt(|a_ii a_jj|) (the strong couplings),
// else 0 (the diagonal and the weak couplings).
std::vector<char> strong_connections(const CsrMatrix<double>& A, double theta);

// Which aggregate each row belongs to. A row without strong neighbours belongs to none (-1):
// the coarse levels cannot help it, the smoother handles it.
struct Aggregates {
  std::vector<index_t> of;  // row -> aggregate in 0 .. count-1, or -1
  index_t count = 0;
};

// The greedy's pass 2 counts two couplings within this relative tolerance as a tie (the first
// wins): values that differ in their last bits only, as one Galerkin product summed in another
// order gives them, pick the same aggregate on the host and on the device.
inline constexpr double kGreedyTie = 1e-10;

// Greedy aggregation (Vanek, Mandel, Brezina 1996, the three passes): rows in order, a row
// whose strong neighbours are all free forms an aggregate with them; rows left join their
// strongest aggregated neighbour; rows still left start aggregates with their free neighbours.
// Sequential (one pass over A), deterministic, and on grids regular aggregates: on the 5-point
// Poisson problem CG needs 10-11 iterations from 250k to 1M rows where MIS(2) needs 17-24.
// With device_pass2, pass 2 runs there (GpuLevelValues::join_strongest) on the values the device
// holds: for a GPU set-up's coarse level whose values were not copied to the host.
Aggregates greedy_aggregate(const CsrMatrix<double>& A, const std::vector<char>& strong,
                            GpuLevelValues* device_pass2 = nullptr);

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

// The diagonal of the filtered matrix A_F (A's strong entries, the weak ones lumped onto the
// diagonal so that row sums are kept): a_ii + sum of the row's weak entries, or a_ii where that
// sum is not positive.
std::vector<double> filtered_diagonal(const CsrMatrix<double>& A, const std::vector<char>& strong);

// A_F itself on A's pattern (weak entries zero): what the spectral radius is estimated on.
CsrMatrix<double> filtered_matrix(const CsrMatrix<double>& A, const std::vector<char>& strong,
                                  const std::vector<double>& diagonal);

// The smoothed prolongator's pattern and where each entry of A adds into it.
struct Prolongator {
  CsrMatrix<double> P;            // rows of A x aggregates; values by smooth_prolongator
  std::vector<index_t> position;  // entry k of A (diagonal or strong, aggregated column):
                                  // its position in P.values, else -1
  std::vector<double> weight;     // per aggregate: the tentative value 1 / sqrt(size)
};
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

// What shapes the hierarchy (the smoother is the preconditioner's business, not the set-up's).
struct HierarchyOptions {
  int max_levels = 10;  // levels at most, the finest included
  double theta = 0.08;  // strength threshold on the finest level
  // Level l's threshold is theta * theta_decay^l: a Galerkin operator's rows are dense (30
  // entries on a 3-D Poisson's first coarse level) and most of their couplings fall under
  // theta; filtering them out lumped them onto P's diagonal and made 3-D coarse levels useless
  // (poisson3d:60 29 iterations, :200 76 on the GPU). 0.25: 3-D 60^3 29 -> 9, 100^3 48 -> 10,
  // poisson2d:1000 11 -> 8; 0.5 (amgcl's halving) the same iterations at operator complexity
  // 1.63 on 3-D against 1.57; 0 (all coupled below the finest) 10 and 12.
  double theta_decay = 0.25;
  // A level whose aggregation would coarsen by more than this is aggregated again with its
  // threshold raised (x4, at least 0.02, up to three times; level_pattern): aggregates as large as
  // a dense row's neighbourhood leave a coarse level that cannot represent the smooth modes.
  double max_coarsening = 60;
  index_t coarse = 300;    // stop coarsening at this many rows or fewer
  int lanczos_steps = 10;  // for rho(D_F^-1 A_F), P's damping (6: Richmond step 4 1062 -> 1765 its)
  // P's damping from Gershgorin's bound of D_F^-1/2 A_F D_F^-1/2 instead of Lanczos
  // (`amg:spectrum=gershgorin`, amgcl's default, power_iters = 0): one pass over A, no
  // iterations; a bound never below rho, so omega never too large. Not the default: +3-4 CG
  // iterations on Poisson grids (BENCHMARKS 20h).
  bool gershgorin_damping = false;
  // Lanczos steps below the finest level (`amg:coarse_lanczos=N`); -1: lanczos_steps.
  int coarse_lanczos_steps = -1;
  int lanczos_steps_at(std::size_t level) const {
    if (gershgorin_damping) return 0;
    return level > 0 && coarse_lanczos_steps >= 0 ? coarse_lanczos_steps : lanczos_steps;
  }
  bool mis2 = false;     // aggregation by MIS(2) instead of the greedy passes
  bool blocked = false;  // the greedy by blocks on all host cores (blocked_greedy_aggregate)
  // Strength and MIS(2) aggregation on the device (with gpu; on the host: mis2_aggregate, the
  // same algorithm and result). MIS(2) costs iterations on 2-D grids (poisson2d:1000 8 -> 26,
  // one thread, BENCHMARKS 20e), so it is asked for, not the default.
  bool device_aggregation = false;
  bool gpu = false;  // P's and R's patterns and values and R A P on the GPU (amg_gpu.hpp)
  // With gpu: P and R also on the host (the tests, a float program read them); false leaves
  // them on the device only (GpuLevelValues::keep_host_copies).
  bool host_copies = true;
  // With gpu: the finest operator's arrays where the device already holds them (the SpMV
  // backend's copy lent to the preconditioner, in double; GpuLevelValues::lend_operator), its
  // values refreshed by their owner before each set-up. All null: level 0 uploads its own.
  CsrArrays finest_on_device;
};

struct Level {
  CsrMatrix<double> A;  // the level's operator; empty at level 0 (the caller's A)
  Interval spectrum{};  // of D^-1 A: the Gershgorin bound only (the smoothers' interval)
  // Towards the next level (empty on the coarsest):
  double theta = 0;          // the strength threshold this level was aggregated with
  std::vector<char> strong;  // per entry of the operator
  Aggregates aggregates;
  Prolongator prolongator;  // P
  Transposed restriction;   // R = P^T, and where each entry of P went in it
  double omega = 0;         // P's damping, 4 / (3 rho(D_F^-1 A_F))
  // With HierarchyOptions::gpu: the level's patterns, values and SpGEMM plans on the device,
  // kept for set_values. Shared so that a Level stays copyable (a copy shares the plans: copies
  // must not refresh at the same time).
  std::shared_ptr<GpuLevelValues> gpu;
  double seconds = 0;  // this level's share of the last set-up
};

struct Hierarchy {
  std::vector<Level> levels;
  std::vector<std::pair<std::string, double>> phase_seconds;  // the last set-up's, by phase
  // Level l's operator: A itself at l = 0.
  const CsrMatrix<double>& op(const CsrMatrix<double>& A, std::size_t l) const {
    return l == 0 ? A : levels[l].A;
  }
  bool has_next(std::size_t l) const { return l + 1 < levels.size(); }
};

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
