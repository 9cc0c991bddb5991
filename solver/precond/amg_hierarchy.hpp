// The data of a smoothed-aggregation AMG hierarchy (amg_setup.hpp builds it): what shapes it
// (HierarchyOptions), the aggregates, the prolongator's pattern, and each level's operator,
// aggregates, P and R. Plain data, shared by the host set-up (amg_setup.hpp, amg_aggregate.hpp)
// and the device's (amg_gpu.hpp), which include it and not each other.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "formats/csr.hpp"
#include "solver/precond/program_spec.hpp"  // CsrArrays
#include "solver/precond/sparse_parts.hpp"  // Transposed
#include "solver/precond/spectrum.hpp"      // Interval

namespace cgs::precond::amg {

class GpuLevelValues;  // amg_gpu.hpp: a level's set-up on the device

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

// The smoothed prolongator's pattern and where each entry of A adds into it.
struct Prolongator {
  CsrMatrix<double> P;            // rows of A x aggregates; values by smooth_prolongator
  std::vector<index_t> position;  // entry k of A (diagonal or strong, aggregated column):
                                  // its position in P.values, else -1
  std::vector<double> weight;     // per aggregate: the tentative value 1 / sqrt(size)
};

// A near-nullspace (amg_nullspace.hpp): the vectors the coarse levels must represent exactly
// (rigid-body modes for elasticity; the default, without one, is the constant vector), and the
// node of each row: aggregation goes by nodes, all of a node's rows in one aggregate.
struct NearNullspace {
  std::vector<double> B;         // rows x cols, column-major: entry (i, c) at c * rows + i
  int cols = 0;
  std::vector<index_t> node_of;  // row -> node in 0 .. nodes-1
  index_t nodes = 0;
  index_t rows() const { return index_t(node_of.size()); }
};

// What shapes the hierarchy (the smoother is the preconditioner's business, not the set-up's):
// a field a line with its default. The keys of `amg:` that set them: amg_options.cpp's table.
struct HierarchyOptions {
  int max_levels = 10;        // levels at most, the finest included (`levels`)
  double theta = 0.08;        // strength threshold on the finest level (`theta`)
  double theta_decay = 0.25;  // level l's threshold: theta * theta_decay^l (BENCHMARKS.md §20c)
  // A level that would coarsen by more than this is aggregated again with its threshold raised
  // (x4, at least 0.02, up to three times: level_pattern), so coarse levels keep the smooth modes.
  double max_coarsening = 60;
  index_t coarse = 300;    // stop coarsening at this many rows or fewer (`coarse`)
  int lanczos_steps = 10;  // Lanczos steps for rho(D_F^-1 A_F), P's damping (BENCHMARKS.md §17)
  // P's damping from Gershgorin's bound of D_F^-1/2 A_F D_F^-1/2 instead (BENCHMARKS.md §20h).
  bool gershgorin_damping = false;
  int coarse_lanczos_steps = -1;  // Lanczos steps below the finest level; -1: lanczos_steps
  int lanczos_steps_at(std::size_t level) const {
    if (gershgorin_damping) return 0;
    return level > 0 && coarse_lanczos_steps >= 0 ? coarse_lanczos_steps : lanczos_steps;
  }
  bool mis2 = false;     // aggregation by MIS(2) instead of the greedy passes (BENCHMARKS.md §20e)
  bool blocked = false;  // the greedy by row blocks on every host core (BENCHMARKS.md §20f)
  bool device_aggregation = false;  // strength and MIS(2) on the device, with gpu
  // Level 0's near-nullspace; null: the constant vector, row by row (the greedy's T). With one
  // the set-up runs on the host (gpu false): the tentative P is each aggregate's QR.
  std::shared_ptr<const NearNullspace> nullspace;
  bool gpu = false;         // P's and R's patterns and values and R A P on the GPU (amg_gpu.hpp)
  bool host_copies = true;  // with gpu: P and R also on the host (tests and float programs)
  // With gpu: the finest operator where the device already holds it (the SpMV backend's copy,
  // GpuLevelValues::lend_operator); all null: level 0 uploads its own.
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
  // With a near-nullspace: this level's (level 0's is the options'), and the tentative P (T,
  // orthonormal columns per aggregate) that P smooths.
  std::shared_ptr<const NearNullspace> nullspace;
  CsrMatrix<double> tentative;
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

}  // namespace cgs::precond::amg
