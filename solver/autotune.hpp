// The inspector behind `--format auto` and `--kernel auto`: it picks the SpMV format, the GPU
// kernel and whether to sort rows by timing a short list of candidates on the matrix itself.
//
// Each candidate is built (rows sorted if it asks), its solve set up once (PreparedSolve), and
// a few short CG solves on it are timed on the device's own clock, the same clock the solve
// reports (one warm-up first). The candidate with the lowest median time per iteration wins,
// and the solve runs on the winner as built here: nothing is sorted or converted twice. The list is
// pruned by the matrix statistics (formats/stats.hpp) so that the inspection costs a few percent
// of a typical solve: ELL only when its padding is small, sorting only when row lengths vary.
//
// The inspector's cost is what the user would not have paid with the same choice made by hand:
// timing the candidates and building (and sorting for) the ones that lost. Building the winner
// is not in it (a hand choice builds it too), nor is starting the OpenMP thread team, which
// whatever runs first in parallel pays once per process: the inspector starts the team first,
// timed apart, so that neither the candidates' timings nor its cost include it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/solve.hpp"

namespace cgs {

struct AutoCandidate {
  Format format = Format::csr;
  bool sort_rows = false;
  std::string kernel;         // GPU kernel; empty = the format's default
  double median_seconds = 0;  // per CG iteration, device clock
  int products = 0;           // timed CG trials (fewer when stopped early)
  std::string label() const;  // e.g. "hll sorted", "csr/scalar"
};

struct AutoChoice {
  BackendOptions backend;            // the winner's format and kernel, other fields as asked
  bool sort_rows = false;            // the winner's row order
  std::vector<AutoCandidate> timed;  // every candidate timed, fastest first
  std::vector<std::string> skipped;  // candidates left out, with why ("ell: fill 9.3")
  // On the OpenMP device with the fused loop, when serial or team has to be timed: decided once
  // for every candidate and the solve (it depends on the system's size and the machine, not on
  // the format). Empty otherwise: the size or the choice asked for decides at once.
  std::optional<ResolvedCpuLoop> cpu_loop;
  std::string reason;               // one line: the winner's time against the others'
  double seconds = 0;               // the inspector's cost, as defined above
  double thread_start_seconds = 0;  // starting the OpenMP team (not in seconds)
  // The winner as built, in the precision asked (the other one is empty); its sort and convert
  // times are what a hand choice pays as well.
  BuiltBackend<double> built_double;
  BuiltBackend<float> built_float;
};

// Times the candidates allowed by options (auto_format: all formats and, when it helps, sorted
// rows; auto_kernel on the GPU: the format's kernels) and returns the fastest, built. A candidate
// whose backend cannot be built (e.g. the ELL guard) is skipped, not fatal.
AutoChoice choose_backend(const CsrMatrix<double>& A, const SolveOptions& options);

// How many times choose_backend has run in this process: lets tests (and callers that reuse a
// choice) check that nothing inspects twice.
long inspector_runs();

}  // namespace cgs
