// From what the user asked (SolveRequest) to what will run (Plan), decided once, before anything
// is built, and printed by the report:
//   request --make_plan (hand rules, this file) or inspect (solver/inspector.hpp)--> Plan
//   Plan --make_solver--> Solver: analyze(A) / set_values(A) / solve(b, x) (solver/solver.hpp)
// Every decision that is not simply what was asked leaves a reason in Plan::reasons.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "formats/stats.hpp"
#include "solver/cg_types.hpp"
#include "solver/loop.hpp"
#include "solver/precond/preconditioner.hpp"
#include "spmv/backend.hpp"

namespace cgs {

enum class CpuLoopAsk { automatic, serial, team, generic };
enum class GpuLoopAsk { automatic, persistent, graph, generic, cluster };
inline std::string to_string(GpuLoopAsk loop) {
  switch (loop) {
    case GpuLoopAsk::automatic: return "auto";
    case GpuLoopAsk::persistent: return "persistent";
    case GpuLoopAsk::graph: return "graph";
    case GpuLoopAsk::generic: return "generic";
    case GpuLoopAsk::cluster: return "cluster";
  }
  return "?";
}

// What the user asked for (the CLI, resolved to types); "auto" is kept as asked.
struct SolveRequest {
  BackendOptions backend;    // format, device, threads, kernel ("" default, "auto"), shapes
  bool device_auto = false;  // --device auto: choose_device (solver/device_choice.hpp) decides
  bool format_auto = false;  // --format auto: the inspector picks format, kernel, sorting
  Precision precision = Precision::double_;
  bool sort_rows = false;
  std::optional<bool> rcm;  // --rcm / --no-rcm; unset: the preconditioner's preference
  PrecondSpec precond;      // may be "auto"
  CpuLoopAsk cpu_loop = CpuLoopAsk::automatic;
  GpuLoopAsk gpu_loop = GpuLoopAsk::automatic;
  CgOptions cg;  // check_every 0 and max_iters 0: the defaults
  // --precond auto: how long its first candidate runs on the solve's own right-hand side before
  // any rate is extrapolated (solver/precond_probe.cpp says why 0.25 s).
  double auto_first_probe_seconds = 0.25;

  bool kernel_auto() const { return backend.kernel == "auto"; }
  bool precond_auto() const { return precond.name == "auto"; }
  bool needs_inspector() const { return format_auto || kernel_auto() || precond_auto(); }
};

// What will run. Nothing in it says "auto".
struct Plan {
  Device device = Device::omp;
  int threads = 1;  // OpenMP threads, resolved (1 on the serial device and the GPU)
  Format format = Format::csr;
  std::string kernel;  // the GPU kernel (spmv/kernel_registry.hpp); empty on the CPU
  index_t hack_size = 32;
  index_t hll_tail = -1;   // HLL's HYB tail threshold; -1: from the row lengths
  index_t hll_sigma = -1;  // HLL's sort window (SELL-C-sigma); 0: none; -1: from the row lengths
  int block_size = 0, blocks = 0;
  double max_ell_fill = 10;
  Precision precision = Precision::double_;
  bool rcm = false, sort_rows = false;
  PrecondSpec precond;
  Loop loop = Loop::generic;
  CgOptions cg;                      // check_every and max_iters resolved
  std::vector<std::string> reasons;  // "loop: persistent (n = 15,000 fits ...)", one per decision
  std::string inspection;  // what the inspector timed and why it chose (empty without one)

  BackendOptions backend_options() const;
  // One line: "csr/scalar, rows in reverse Cuthill-McKee order, jacobi, persistent loop, double"
  std::string summary() const;
};

// The plan's fields the request names directly (device, threads, format, kernel as asked, shapes,
// precision, sorting, preconditioner, RCM by the preconditioner's preference); no choices made.
// make_plan starts from it; so does the distributed solve's plan.
Plan plan_as_asked(const SolveRequest& r);

// The GPU kernel of a plan (r's, or the default for its format and loop from the row
// statistics), its reason added to plan.reasons. make_plan's first GPU step; no device needed.
std::string choose_gpu_kernel(const SolveRequest& r, const MatrixStats& stats,
                              const RowSpread& spread, Plan& plan);

// The plan by hand rules for a request without "auto" (make_solver_for below handles "auto"
// through the inspector). It may time the serial and team CPU loops on the system when its
// size alone does not decide (see kNeverTeamWork). Throws InputError for an impossible request.
Plan make_plan(const SolveRequest& request, const CsrMatrix<double>& A);

// On the OpenMP device, the fused loop runs serially below kNeverTeamWork stored entries plus
// rows and as a team above kAlwaysTeamWork; in between the planner times both (a few 10-iteration
// solves each) and takes the team only when it is at least 10% faster. No formula of the size did:
// a team iteration's fixed cost (barriers, and the cache lines of p that the neighbouring threads
// wrote) is 2-4 us with 16 threads on 16 cores, but 10-20 us with 2 threads on two shared cores,
// where an EPANET system whose rows reach all over the vector (Exnet, 8,612 entries and rows) ran
// 2.4x slower in a team, while a 2D Poisson matrix of half its size ran faster with 16 threads
// on the host (bench/teamsweep).
inline constexpr long kNeverTeamWork = 1000;
inline constexpr long kAlwaysTeamWork = 200000;
inline bool team_choice_is_timed(long work) {
  return work >= kNeverTeamWork && work < kAlwaysTeamWork;
}

// The default --check-every: every iteration on the CPU (the scalars are on the host anyway),
// every 16 on the GPU (measured 79 -> 65 us per iteration at n = 1M going from 1 to 16).
int default_check_every(Device device);

std::string to_string(Precision precision);

}  // namespace cgs
