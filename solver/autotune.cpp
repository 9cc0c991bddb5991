#include "solver/autotune.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <optional>

#include "formats/convert.hpp"
#include "formats/row_order.hpp"
#include "formats/stats.hpp"
#include "solver/cg.hpp"
#include "solver/omp_fused_cg.hpp"
#include "solver/vector_ops.hpp"

namespace cgs {

namespace {

// What is timed is what the solve runs: short CG solves (tol 0, kTrialIterations iterations)
// on a PreparedSolve of the candidate, so the CG loop the candidate gets counts (on the GPU a
// kernel with a row function runs the fused loop, 3x faster per iteration at n ~ 15,000 than
// the generic loop around an SpMV that may itself be a little faster; timing SpMVs alone picked
// the latter). The first trial warms up; then up to kMaxTrials timed, the median per iteration.
// Cost control (at most 8 candidates): the solve's set-up (b and 1/diag(A) to the device, the
// vector operations, the fused GPU loop's work vectors and pinned memory) is done once per
// candidate, so a trial costs its iterations plus x to the device and back; a candidate stops
// after kMinTrials timed trials when clearly behind the best so far, or once its timed trials
// passed the budget. (H200, 2026-11-22: with the set-up redone by every trial the inspector took
// 56-83 ms on n ~ 15,000 systems and 0.5 s at n = 10^6, the timed iterations a few ms.)
constexpr int kTrialIterations = 10;
constexpr int kMaxTrials = 4;
constexpr int kMinTrials = 2;
constexpr double kClearlySlower = 1.3;
constexpr double kTimingBudgetSeconds = 2e-3;
// ELL pays for every padded slot; above this fill it loses to HLL/CSR, so it is not timed.
constexpr double kMaxEllFillWorthTiming = 2.0;
// Sorting only changes anything when row lengths vary (HLL padding, GPU warp divergence).
constexpr double kMinDeviationPctForSorting = 10.0;

using Clock = std::chrono::steady_clock;
double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::atomic<long> runs{0};

std::string fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

// The GPU kernels worth timing per format (names from spmv/cuda/cuda_backends.cu). With
// --format auto the list stays short (8 candidates at most); with --kernel auto alone, every
// kernel of the one format is timed.
std::vector<std::string> gpu_kernels(Format format, bool all_formats) {
  switch (format) {
    case Format::csr:
      if (all_formats) return {"scalar", "stream", "cusparse"};
      return {"scalar", "vector", "adaptive", "stream", "cusparse"};
    case Format::ell: return {"thread"};
    case Format::hll:  // with auto: ours, which has a fused loop (cuSPARSE's does not)
      return all_formats ? std::vector<std::string>{"thread"}
                         : std::vector<std::string>{"thread", "cusparse"};
    case Format::coo:
      return all_formats ? std::vector<std::string>{"cusparse"}
                         : std::vector<std::string>{"segscan", "cusparse"};
  }
  return {""};
}

// On the GPU, whether the candidate runs the generic CG loop (its kernel has no row function
// for the fused loops; spmv/cuda/fused_spmv.cuh): a chain of separate kernel launches, about
// 35-50 us an iteration on an H200 at n ~ 15,000 whatever the SpMV, against 7-10 us fused.
bool runs_generic_gpu_loop(const AutoCandidate& c) {
  switch (c.format) {
    case Format::csr: return c.kernel != "scalar";
    case Format::ell: return false;
    case Format::hll: return c.kernel == "cusparse";
    case Format::coo: return true;
  }
  return true;
}
// Below this per-iteration time of the best fused candidate, no generic-loop candidate can win
// and none is built or timed (each would cost a backend build and a few trials).
constexpr double kGenericLoopFloorSeconds = 20e-6;

// Sorting is tried only for the formats it can help: CSR (GPU: scalar, the kernel that suffers
// from uneven rows in a warp) and HLL (less padding per hack).
bool worth_sorting(const AutoCandidate& c, Device device) {
  if (c.format == Format::hll) return true;
  if (c.format != Format::csr) return false;
  return device != Device::gpu || c.kernel == "scalar";
}

std::vector<AutoCandidate> candidate_list(const MatrixStats& stats, const SolveOptions& options,
                                          std::vector<std::string>& skipped) {
  const bool gpu = options.backend.device == Device::gpu;
  const std::vector<Format> formats =
      options.auto_format ? std::vector<Format>{Format::csr, Format::hll, Format::ell, Format::coo}
                          : std::vector<Format>{options.backend.format};
  const bool try_sorting =
      options.auto_format && stats.row_length_avg_deviation_pct >= kMinDeviationPctForSorting;
  if (options.auto_format && !try_sorting)
    skipped.push_back("sorting (row lengths nearly uniform, deviation " +
                      fixed(stats.row_length_avg_deviation_pct, 1) + "%)");

  std::vector<AutoCandidate> list;
  for (Format format : formats) {
    if (format == Format::ell && options.auto_format) {
      const double limit = std::min(options.backend.max_ell_fill, kMaxEllFillWorthTiming);
      if (stats.ell_fill > limit) {
        skipped.push_back("ell (fill " + fixed(stats.ell_fill, 1) + " > " + fixed(limit, 1) + ")");
        continue;
      }
    }
    const std::vector<std::string> kernels = gpu && (options.auto_kernel || options.auto_format)
                                                 ? gpu_kernels(format, options.auto_format)
                                                 : std::vector<std::string>{options.backend.kernel};
    for (const std::string& kernel : kernels) {
      AutoCandidate c;
      c.format = format;
      c.sort_rows = !options.auto_format && options.sort_rows;  // with auto: timed both ways
      c.kernel = kernel;
      list.push_back(c);
      if (try_sorting && worth_sorting(c, options.backend.device)) {
        c.sort_rows = true;
        list.push_back(c);
      }
    }
  }
  if (gpu)  // the fused-loop candidates first, so that the floor above can skip the others
    std::stable_partition(list.begin(), list.end(),
                          [](const AutoCandidate& c) { return !runs_generic_gpu_loop(c); });
  return list;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Short CG solves with the candidate's backend, timed on the device clock (see kTrialIterations);
// stops early once the running median is clearly behind the best so far (0 = none yet).
template <typename T>
void time_iterations(const CsrMatrix<double>& A, const SolveOptions& options,
                     BuiltBackend<T>& candidate, double best_so_far, AutoCandidate& c) {
  SolveOptions trial = options;
  trial.auto_format = trial.auto_kernel = false;
  trial.cg.tol = 0;
  trial.cg.atol = 0;
  trial.cg.max_iters = kTrialIterations;
  trial.cg.record_history = false;
  trial.cg.progress = nullptr;
  trial.true_residual = false;
  const std::vector<double> b(std::size_t(A.rows), 1.0);
  PreparedSolve<T> prepared(A, b, trial, candidate);  // set up once for all trials
  std::vector<double> per_iteration;
  double spent = 0;
  for (int i = 0; i <= kMaxTrials; ++i) {
    std::vector<double> x;  // zero
    const SolveReport report = prepared.run(x);
    if (report.cg.iterations <= 0) break;  // nothing to time (b = 0 cannot happen: b = 1)
    if (i == 0) continue;                  // warm-up
    per_iteration.push_back(report.cg.solve_seconds / double(report.cg.iterations));
    spent += report.cg.solve_seconds;
    if (int(per_iteration.size()) < kMinTrials) continue;
    if (spent > kTimingBudgetSeconds) break;
    if (best_so_far > 0 && median(per_iteration) > kClearlySlower * best_so_far) break;
  }
  c.products = int(per_iteration.size());
  c.median_seconds = median(per_iteration);
}

// The matrix in the solve's precision, in file order and (built on first use) sorted, with the
// time each took: sorting once, casting once per order (a hand choice pays those for its order).
template <typename T>
class CandidateMatrices {
 public:
  explicit CandidateMatrices(const CsrMatrix<double>& A) : A_(A) {}
  const CsrMatrix<T>& get(bool sorted) {
    if constexpr (std::is_same_v<T, double>) {
      if (!sorted) return A_;  // no copy: the backend converts from it
      return sorted_double();
    } else {
      std::optional<CsrMatrix<T>>& slot = sorted ? sorted_ : original_;
      if (!slot) {
        const CsrMatrix<double>& source = sorted ? sorted_double() : A_;
        const auto start = Clock::now();
        slot = cast_values<T>(source);
        cast_seconds_[sorted] = since(start);
      }
      return *slot;
    }
  }
  const RowPermutation& permutation() const { return P_; }
  double sort_seconds() const { return sort_seconds_; }
  double cast_seconds(bool sorted) const { return cast_seconds_[sorted]; }

 private:
  const CsrMatrix<double>& sorted_double() {
    if (!sorted_double_) {
      const auto start = Clock::now();
      P_ = sort_rows_by_length(A_);
      sorted_double_ = permute_symmetric(A_, P_);
      sort_seconds_ = since(start);
    }
    return *sorted_double_;
  }
  const CsrMatrix<double>& A_;
  RowPermutation P_;
  std::optional<CsrMatrix<double>> sorted_double_;
  std::optional<CsrMatrix<T>> original_, sorted_;
  double sort_seconds_ = 0, cast_seconds_[2] = {0, 0};
};

BackendOptions options_for(const AutoCandidate& c, const BackendOptions& asked) {
  BackendOptions o = asked;
  o.format = c.format;
  o.kernel = c.kernel;
  return o;
}

template <typename T>
BuiltBackend<T>& built_slot(AutoChoice& choice) {
  if constexpr (std::is_same_v<T, double>)
    return choice.built_double;
  else
    return choice.built_float;
}

// Times every candidate and keeps the fastest one's backend (and row order) for the solve.
template <typename T>
void time_candidates(const CsrMatrix<double>& A, const SolveOptions& options,
                     std::vector<AutoCandidate>& list, AutoChoice& choice) {
  CandidateMatrices<T> matrices(A);
  BuiltBackend<T>& winner = built_slot<T>(choice);
  double best = 0;
  bool winner_sorted = false;
  std::string floored;  // generic-loop candidates left out (kGenericLoopFloorSeconds)
  for (AutoCandidate& c : list) {
    if (options.backend.device == Device::gpu && runs_generic_gpu_loop(c) && best > 0 &&
        best < kGenericLoopFloorSeconds) {
      floored += (floored.empty() ? "" : ", ") + c.label();
      continue;
    }
    std::unique_ptr<SpmvBackend<T>> backend;
    const CsrMatrix<T>& matrix = matrices.get(c.sort_rows);
    const auto start = Clock::now();
    try {
      backend = make_backend(matrix, options_for(c, options.backend));
    } catch (const InputError& e) {  // e.g. the ELL guard, a kernel that does not fit
      choice.skipped.push_back(c.label() + " (" + e.what() + ")");
      continue;
    }
    const double build_seconds = since(start) - backend->transfer_seconds();
    BuiltBackend<T> candidate;
    candidate.backend = std::move(backend);
    if (c.sort_rows) candidate.permutation = matrices.permutation();
    time_iterations(A, options, candidate, best, c);
    choice.timed.push_back(c);
    if (winner.backend && c.median_seconds >= best) continue;  // ties: the first, as sorted
    best = c.median_seconds;
    winner.backend = std::move(candidate.backend);
    winner.convert_seconds = build_seconds + matrices.cast_seconds(c.sort_rows);
    winner_sorted = c.sort_rows;
  }
  if (!floored.empty())
    choice.skipped.push_back(floored +
                             " (the generic loop's kernel launches alone take longer "
                             "than the best fused loop's " +
                             fixed(best * 1e6, 2) + " us)");
  if (winner_sorted) {
    winner.permutation = matrices.permutation();
    winner.sort_seconds = matrices.sort_seconds();
  }
}

// Starting the OpenMP team is paid once per process by the first parallel region: here, not in
// the first candidate's timings, and not charged to the inspector (the solve would pay it).
double start_thread_team(const SolveOptions& options) {
  if (options.backend.device != Device::omp) return 0;
  const int threads = options.backend.threads > 0 ? options.backend.threads : omp_get_max_threads();
  const auto start = Clock::now();
#pragma omp parallel num_threads(threads)
  {}
  return since(start);
}

// Serial or team (solver/omp_fused_cg.hpp), decided once on a CSR backend of A with b = 1 when
// it takes timing short solves of both loops; otherwise (other devices, a named choice, a
// size that decides) empty, and each candidate's solve decides at once, without a backend
// built only for this.
std::optional<ResolvedCpuLoop> resolve_cpu_loop_once(const CsrMatrix<double>& A,
                                                     const SolveOptions& options) {
  if (options.backend.device != Device::omp || !options.fused_cpu_loop ||
      options.fused_cpu_choice != FusedCpuLoop::automatic ||
      !team_choice_is_timed(long(A.nnz()) + A.rows))
    return std::nullopt;
  BackendOptions csr = options.backend;
  csr.format = Format::csr;
  csr.kernel.clear();
  const std::unique_ptr<SpmvBackend<double>> backend = make_backend(A, csr);
  const std::vector<double> b(std::size_t(A.rows), 1.0);
  const double* no_jacobi = nullptr;
  return resolve_fused_cpu_loop(*backend, no_jacobi, b.data(), options.fused_cpu_choice);
}

std::string micro(double seconds) { return fixed(seconds * 1e6, 2) + " us"; }

std::string explain(const AutoChoice& choice) {
  const AutoCandidate& best = choice.timed.front();
  std::string text = best.label() + ": " + micro(best.median_seconds) + " per CG iteration";
  for (std::size_t i = 1; i < choice.timed.size(); ++i) {
    const AutoCandidate& c = choice.timed[i];
    text += (i == 1 ? " vs " : ", ") + c.label() + " " + micro(c.median_seconds);
    if (c.products < kMaxTrials) text += " (" + std::to_string(c.products) + " trials)";
  }
  if (!choice.skipped.empty()) {
    text += "; skipped";
    for (std::size_t i = 0; i < choice.skipped.size(); ++i)
      text += (i == 0 ? " " : ", ") + choice.skipped[i];
  }
  return text;
}

}  // namespace

std::string AutoCandidate::label() const {
  std::string text = to_string(format);
  if (!kernel.empty()) text += "/" + kernel;
  if (sort_rows) text += " sorted";
  return text;
}

AutoChoice choose_backend(const CsrMatrix<double>& A, const SolveOptions& options) {
  ++runs;
  AutoChoice choice;
  choice.thread_start_seconds = start_thread_team(options);
  const auto start = Clock::now();
  std::vector<AutoCandidate> list =
      candidate_list(compute_stats(A, options.backend.hack_size), options, choice.skipped);
  SolveOptions tuned = options;
  tuned.resolved_cpu_loop = choice.cpu_loop = resolve_cpu_loop_once(A, options);
  if (options.precision == Precision::single)
    time_candidates<float>(A, tuned, list, choice);
  else
    time_candidates<double>(A, tuned, list, choice);
  if (choice.timed.empty())
    throw InputError("--format/--kernel auto: no candidate could be built for this matrix");
  std::stable_sort(choice.timed.begin(), choice.timed.end(),
                   [](const AutoCandidate& a, const AutoCandidate& b) {
                     return a.median_seconds < b.median_seconds;
                   });
  choice.backend = options_for(choice.timed.front(), options.backend);
  choice.sort_rows = choice.timed.front().sort_rows;
  choice.reason = explain(choice);
  const double winner_build = choice.built_double.sort_seconds +
                              choice.built_double.convert_seconds +
                              choice.built_float.sort_seconds + choice.built_float.convert_seconds;
  choice.seconds = since(start) - winner_build;
  return choice;
}

long inspector_runs() { return runs.load(); }

}  // namespace cgs
