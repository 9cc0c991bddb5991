// The inspector behind `--format auto` and `--kernel auto`: it fills in the plan's format, GPU
// kernel and row sorting by timing a short list of candidates on the matrix itself.
//
// Each candidate is a plan (solver/plan.hpp) made from the request with the choice fixed; its
// solver is built and analyzed, and a few short CG solves on it are timed on the device's own
// clock, the clock the solve reports (one warm-up first). The candidate with the lowest median
// time per iteration wins, and its solver, as analyzed here, is what the solve runs on: nothing
// is sorted or converted twice. The list is pruned by the matrix statistics (formats/stats.hpp)
// so that the inspection costs a few percent of a typical solve: ELL only when its padding is
// small, sorting only when row lengths vary, on the GPU kernels without a row function only when
// the best fused loop is slow enough for them to matter.
//
// The inspector's cost is what the user would not have paid with the same choice made by hand:
// timing the candidates and building the ones that lost. Building the winner is not in it (a hand
// choice builds it too), nor is starting the OpenMP thread team, which whatever runs first in
// parallel pays once per process: the inspector starts the team first, timed apart.
#pragma once

#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "formats/stats.hpp"
#include "solver/solver.hpp"

namespace cgs {

struct InspectedCandidate {
  Format format = Format::csr;
  bool sort_rows = false;
  std::string kernel;         // GPU kernel; empty on the CPU
  double median_seconds = 0;  // per CG iteration, device clock
  int trials = 0;             // timed CG trials (fewer when stopped early)
  Loop loop = Loop::generic;  // the loop its plan runs
  std::string label() const;  // e.g. "hll sorted", "csr/scalar"
};

// Everything the inspector did: the winner's solver, analyzed (planned.solver), every candidate
// timed (fastest first) and every one left out, with why.
struct Inspection {
  PlannedSolver planned;
  std::vector<InspectedCandidate> timed;
  std::vector<std::string> skipped;
  std::string reason;  // one line: the winner's time against the others' (also in its plan)
};
Inspection inspect_candidates(const SolveRequest& request, const CsrMatrix<double>& A);

// The candidates the inspector would build and time for the request, before building any: the
// list pruned by the row statistics (formats/stats.hpp), with each left-out one and why added to
// `skipped`. No device is needed: the GPU's list can be checked on the CPU.
std::vector<InspectedCandidate> inspection_candidates(const CsrMatrix<double>& A,
                                                      const SolveRequest& request,
                                                      std::vector<std::string>& skipped);
std::vector<InspectedCandidate> inspection_candidates(const MatrixStats& stats,
                                                      const RowSpread& spread, const HllTail& tail,
                                                      const SolveRequest& request,
                                                      std::vector<std::string>& skipped);

// The plan for a request with --format auto or --kernel auto, and its solver analyzed on A.
PlannedSolver inspect(const SolveRequest& request, const CsrMatrix<double>& A);

// How many times inspect has run in this process: lets tests (and callers that reuse a choice)
// check that nothing inspects twice.
long inspector_runs();

}  // namespace cgs
