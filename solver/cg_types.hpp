// What a CG solve is asked (CgOptions) and what it returns (CgResult), shared by every loop.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace cgs {

struct CgOptions {
  double tol = 1e-8;    // stop when ||r|| <= tol * ||b|| ...
  double atol = 0;      // ... or when ||r|| <= atol
  long max_iters = 0;   // 0: 10 * n
  int check_every = 1;  // the host looks at the scalars every k iterations (GPU loops)
  bool record_history = false;
  // Time the SpMV pass of every iteration inside the loop that runs (see SpmvTimes). Off only
  // to measure what the timing itself costs (bench/cgbench --no-spmv-timing).
  bool time_spmv = true;
  // Called at every read of the scalars with the iteration and ||r||/||b|| (e.g. a progress
  // line); keep it cheap, it may run every iteration.
  std::function<void(long iteration, double relative_residual)> progress;
};

enum class CgStatus { converged, max_iterations, breakdown, non_finite, zero_rhs };
std::string to_string(CgStatus status);

// The SpMV time of the iterations of one solve, measured inside the loop that ran: around the
// product in the generic loop (CUDA events on the GPU), around the pass that computes q = A p
// (with the p and x updates fused into it) in the fused loops, on the clock their barriers or
// grid syncs already give. `samples` holds the time of every `every`-th iteration (every one
// unless a timer read would cost more than 1% of an iteration, see solver/fused/spmv_timer.hpp).
struct SpmvTimes {
  std::vector<double> samples;  // seconds, one per sampled iteration
  int every = 1;                // 1: every iteration was timed
  std::string what;             // "SpMV" or "SpMV pass (p and x updates fused in)"
  bool measured() const { return !samples.empty(); }
};

struct CgResult {
  CgStatus status = CgStatus::max_iterations;
  long iterations = 0;                   // iterations run (>= converged_at when check_every > 1)
  long converged_at = -1;                // iteration at which the tolerance was met
  double residual_norm = 0;              // recursive ||r||, at the end
  double rhs_norm = 0;                   // ||b||
  std::vector<double> residual_history;  // ||r_k||, k = 0 .. iterations, when recorded
  double solve_seconds = 0;              // device clock, CG loop only
  SpmvTimes spmv;                        // per-iteration SpMV times (empty: not measured)

  bool ok() const { return status == CgStatus::converged || status == CgStatus::zero_rhs; }
  double relative_residual() const { return rhs_norm > 0 ? residual_norm / rhs_norm : 0.0; }
};

}  // namespace cgs
