#include "solver/inspector.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>

#include "formats/stats.hpp"
#include "spmv/kernel_registry.hpp"

namespace cgs {

namespace {

// What is timed is what the solve runs: short CG solves (tol 0, kTrialIterations iterations) on
// the candidate's solver, so the CG loop the candidate gets counts (on the GPU a kernel with a
// row function runs the fused loop, 3x faster per iteration at n ~ 15,000 than the generic loop
// around an SpMV that may itself be a little faster; timing SpMVs alone picked the latter). The
// first trial warms up (kWarmUpIterations: it loads kernels and touches memory, nothing more);
// then up to kMaxTrials timed, the median per iteration. A candidate stops after kMinTrials
// timed trials when clearly behind the best so far, or once its timed trials passed the budget;
// after one trial when that trial alone passed it (10 iterations of a large system: a trial that
// long is steady, and on gen:powerlaw:2000000 each more trial costs 2 ms on a GPU and 0.3 s on
// two CPU cores).
constexpr int kTrialIterations = 10;
constexpr int kWarmUpIterations = 2;
constexpr int kMaxTrials = 4;
constexpr int kMinTrials = 2;
constexpr double kClearlySlower = 1.3;
constexpr double kTimingBudgetSeconds = 2e-3;
// ELL pays for every padded slot; above this fill it loses to HLL/CSR, so it is not timed.
constexpr double kMaxEllFillWorthTiming = 2.0;
// Sorting only changes anything when row lengths vary (HLL padding, GPU warp divergence), and
// for HLL only where its hacks hold a fifth more slots than nonzeros.
constexpr double kMinDeviationPctForSorting = 10.0;
constexpr double kMinHllFillForSorting = 1.2;
constexpr double kMaxCooBytesOverCsr = 1.2;
// On the GPU the generic loop's kernel launches alone take 35-50 us an iteration at
// n ~ 15,000; below this per-iteration time of the best fused candidate none of them can win.
constexpr double kGenericLoopFloorSeconds = 20e-6;

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
std::string micro(double seconds) { return fixed(seconds * 1e6, 2) + " us"; }

// The GPU kernels worth timing for a format (spmv/kernel_registry.hpp): with --format auto those
// marked for inspection, with --kernel auto every kernel of the format.
std::vector<std::string> gpu_kernels_to_time(Format format, bool all_formats) {
  std::vector<std::string> names;
  for (const GpuKernel& k : gpu_kernels())
    if (k.format == format && (!all_formats || k.inspect)) names.push_back(k.name);
  return names;
}

bool has_row_function(const InspectedCandidate& c, Device device) {
  if (device != Device::gpu) return true;
  const GpuKernel* k = find_gpu_kernel(c.format, c.kernel);
  return k && k->row_function;
}

// Sorting is tried only for the formats it can help: CSR on the GPU with a thread per row (the
// kernel that suffers from uneven rows in a warp) and HLL whose hacks carry padding. The CPU
// walkers and the OpenMP parts (balanced by nonzeros) do not depend on the order of CSR rows.
bool worth_sorting(const InspectedCandidate& c, Device device, double hll_fill) {
  if (c.format == Format::hll) return hll_fill > kMinHllFillForSorting;
  return c.format == Format::csr && device == Device::gpu && c.kernel == "scalar";
}

// HLL's stored slots (its HYB tail's entries included) per nonzero: what sorting could remove.
double hll_fill_with_tail(const MatrixStats& stats, const HllTail& tail) {
  if (!tail.any() || stats.nnz == 0) return stats.hll_fill;
  return double(tail.slots + tail.nnz) / double(stats.nnz);
}

// COO streams one more index per nonzero than CSR, for the same products: where that is over
// kMaxCooBytesOverCsr of CSR's bytes (a mean row length over 2 or so), the load-balanced CSR
// kernels do its job with less traffic, so it is not built.
bool coo_streams_too_much(const MatrixStats& stats, std::string& why) {
  const double ratio = stats.bytes_csr > 0 ? double(stats.bytes_coo) / double(stats.bytes_csr) : 0;
  why = "coo (streams " + fixed(ratio, 2) + "x the bytes of csr)";
  return ratio > kMaxCooBytesOverCsr;
}

// With long rows on the GPU, only kernels that split the work by nonzeros; of those,
// cuSPARSE's only where no kernel of ours does the same for the format (csr/stream measured
// 1.01-1.05x cuSPARSE on gen:powerlaw, BENCHMARKS.md section 12).
bool kept_for_long_rows(const GpuKernel& k) {
  if (!k.balanced) return false;
  if (std::string(k.name) != "cusparse") return true;
  for (const GpuKernel& other : gpu_kernels())
    if (other.format == k.format && other.balanced && other.inspect &&
        std::string(other.name) != "cusparse")
      return false;
  return true;
}

}  // namespace

std::vector<InspectedCandidate> inspection_candidates(const MatrixStats& stats,
                                                      const RowSpread& spread, const HllTail& tail,
                                                      const SolveRequest& r,
                                                      std::vector<std::string>& skipped) {
  const Device device = r.backend.device;
  const bool gpu = device == Device::gpu;
  // Long rows on the GPU: a kernel with a row per thread or lane group serialises
  // them (power-law 2M rows: 1,000-3,300 us an iteration against 196 load-balanced), and
  // building and timing those candidates cost 8.5 s there. Only load-balanced kernels are
  // timed, rows unsorted (they do not care about the order).
  const bool balanced_only = gpu && r.format_auto && spread.irregular();
  if (balanced_only)
    skipped.push_back("kernels that split rows, not nonzeros, and sorting (rows over " +
                      std::to_string(spread.threshold) + " entries hold " +
                      fixed(100 * spread.long_share, 1) + "% of the nonzeros, the longest " +
                      std::to_string(spread.longest) + ": they would serialise)");
  const std::vector<Format> formats =
      r.format_auto ? std::vector<Format>{Format::csr, Format::hll, Format::ell, Format::coo}
                    : std::vector<Format>{r.backend.format};
  const double hll_fill = hll_fill_with_tail(stats, tail);
  const bool try_sorting = r.format_auto && !balanced_only &&
                           stats.row_length_avg_deviation_pct >= kMinDeviationPctForSorting;
  if (r.format_auto && !try_sorting && !balanced_only)
    skipped.push_back("sorting (row lengths nearly uniform, deviation " +
                      fixed(stats.row_length_avg_deviation_pct, 1) + "%)");

  std::vector<InspectedCandidate> list;
  for (Format format : formats) {
    if (format == Format::ell && r.format_auto) {
      const double limit = std::min(r.backend.max_ell_fill, kMaxEllFillWorthTiming);
      if (stats.ell_fill > limit) {
        skipped.push_back("ell (fill " + fixed(stats.ell_fill, 1) + " > " + fixed(limit, 1) +
                          "; hll's HYB tail keeps the long rows out of the padding instead)");
        continue;
      }
    }
    std::string why;
    if (format == Format::coo && r.format_auto && coo_streams_too_much(stats, why)) {
      skipped.push_back(why);
      continue;
    }
    const std::vector<std::string> kernels =
        gpu ? (r.kernel_auto() || r.format_auto ? gpu_kernels_to_time(format, r.format_auto)
                                                : std::vector<std::string>{r.backend.kernel})
            : std::vector<std::string>{""};
    for (const std::string& kernel : kernels) {
      InspectedCandidate c;
      c.format = format;
      c.sort_rows = !r.format_auto && r.sort_rows;  // with auto: timed both ways
      c.kernel = kernel;
      if (balanced_only) {
        const GpuKernel* k = find_gpu_kernel(format, kernel);
        if (!k || !kept_for_long_rows(*k)) {
          if (k && k->balanced)
            skipped.push_back(c.label() + " (a kernel of ours splits the same)");
          continue;
        }
      }
      list.push_back(c);
      if (try_sorting && worth_sorting(c, device, hll_fill)) {
        c.sort_rows = true;
        list.push_back(c);
      }
    }
  }
  if (gpu)  // the fused-loop candidates first, so that the floor above can skip the others
    std::stable_partition(list.begin(), list.end(),
                          [&](const InspectedCandidate& c) { return has_row_function(c, device); });
  return list;
}

std::vector<InspectedCandidate> inspection_candidates(const CsrMatrix<double>& A,
                                                      const SolveRequest& r,
                                                      std::vector<std::string>& skipped) {
  const MatrixStats stats = compute_stats(A, r.backend.hack_size);
  return inspection_candidates(stats, row_spread(A), choose_hll_tail(A, r.backend.hack_size), r,
                               skipped);
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

CgOptions trial_options(const Plan& plan) {
  CgOptions trial = plan.cg;
  trial.tol = 0;
  trial.atol = 0;
  trial.max_iters = kTrialIterations;
  trial.record_history = false;
  trial.progress = nullptr;
  trial.time_spmv = false;
  return trial;
}

// Short CG solves on the candidate's solver (see kTrialIterations); stops early once the running
// median is clearly behind the best so far (0 = none yet).
void time_iterations(Solver& solver, index_t n, double best_so_far, InspectedCandidate& c) {
  const std::vector<double> b(std::size_t(n), 1.0);
  const CgOptions trial = trial_options(solver.plan());
  CgOptions warm_up = trial;
  warm_up.max_iters = kWarmUpIterations;
  std::vector<double> per_iteration;
  double spent = 0;
  for (int i = 0; i <= kMaxTrials; ++i) {
    std::vector<double> x;  // zero
    const SolveReport report = solver.solve(b, x, false, i == 0 ? &warm_up : &trial);
    if (report.cg.iterations <= 0) break;  // nothing to time (b = 0 cannot happen: b = 1)
    if (i == 0) continue;                  // warm-up
    per_iteration.push_back(report.cg.solve_seconds / double(report.cg.iterations));
    spent += report.cg.solve_seconds;
    if (spent > kTimingBudgetSeconds && per_iteration.size() == 1) break;
    if (int(per_iteration.size()) < kMinTrials) continue;
    if (spent > kTimingBudgetSeconds) break;
    if (best_so_far > 0 && median(per_iteration) > kClearlySlower * best_so_far) break;
  }
  c.trials = int(per_iteration.size());
  c.median_seconds = median(per_iteration);
}

// The request with the candidate's choice fixed, and the timing solves' stop rule.
SolveRequest fixed_request(const SolveRequest& r, const InspectedCandidate& c,
                           std::optional<CpuLoopAsk> cpu_loop) {
  SolveRequest fixed = r;
  fixed.format_auto = false;
  fixed.backend.format = c.format;
  fixed.backend.kernel = c.kernel;
  fixed.sort_rows = c.sort_rows;
  if (cpu_loop) fixed.cpu_loop = *cpu_loop;
  return fixed;
}

// Starting the OpenMP team is paid once per process by the first parallel region: here, not in
// the first candidate's timings, and not charged to the inspector (the solve would pay it).
double start_thread_team(const SolveRequest& r) {
  if (r.backend.device != Device::omp) return 0;
  const int threads = r.backend.threads > 0 ? r.backend.threads : omp_get_max_threads();
  const auto start = Clock::now();
#pragma omp parallel num_threads(threads)
  {}
  return since(start);
}

std::string explain(const std::vector<InspectedCandidate>& timed,
                    const std::vector<std::string>& skipped) {
  const InspectedCandidate& best = timed.front();
  std::string text = best.label() + ": " + micro(best.median_seconds) + " per CG iteration";
  for (std::size_t i = 1; i < timed.size(); ++i) {
    const InspectedCandidate& c = timed[i];
    text += (i == 1 ? " vs " : ", ") + c.label() + " " + micro(c.median_seconds);
    if (c.trials < kMaxTrials) text += " (" + std::to_string(c.trials) + " trials)";
  }
  if (!skipped.empty()) {
    text += "; skipped";
    for (std::size_t i = 0; i < skipped.size(); ++i) text += (i == 0 ? " " : ", ") + skipped[i];
  }
  return text;
}

}  // namespace

std::string InspectedCandidate::label() const {
  std::string text = to_string(format);
  if (!kernel.empty()) text += "/" + kernel;
  if (sort_rows) text += " sorted";
  return text;
}

PlannedSolver inspect(const SolveRequest& request, const CsrMatrix<double>& A) {
  return inspect_candidates(request, A).planned;
}

Inspection inspect_candidates(const SolveRequest& request, const CsrMatrix<double>& A) {
  ++runs;
  Inspection inspection;
  PlannedSolver& result = inspection.planned;
  result.thread_start_seconds = start_thread_team(request);
  const auto start = Clock::now();
  std::vector<std::string>& skipped = inspection.skipped;
  std::vector<InspectedCandidate> list = inspection_candidates(A, request, skipped);

  std::vector<InspectedCandidate>& timed = inspection.timed;
  std::optional<CpuLoopAsk> cpu_loop;  // serial or team: decided by the first plan, then kept
  double best = 0, winner_setup = 0;
  std::string floored;  // generic-loop candidates left out (kGenericLoopFloorSeconds)
  for (InspectedCandidate& c : list) {
    if (!has_row_function(c, request.backend.device) && best > 0 &&
        best < kGenericLoopFloorSeconds) {
      floored += (floored.empty() ? "" : ", ") + c.label();
      continue;
    }
    const auto built = Clock::now();
    std::unique_ptr<Solver> solver;
    try {
      Plan plan = make_plan(fixed_request(request, c, cpu_loop), A);
      if (!cpu_loop && (plan.loop == Loop::serial || plan.loop == Loop::team))
        cpu_loop = plan.loop == Loop::team ? CpuLoopAsk::team : CpuLoopAsk::serial;
      c.loop = plan.loop;
      solver = make_solver(plan);
      solver->analyze(A);
    } catch (const InputError& e) {  // e.g. the ELL guard, a kernel that does not fit
      skipped.push_back(c.label() + " (" + e.what() + ")");
      continue;
    }
    const double setup = since(built);
    time_iterations(*solver, A.rows, best, c);
    timed.push_back(c);
    if (result.solver && c.median_seconds >= best) continue;  // ties: the first, as sorted
    best = c.median_seconds;
    result.solver = std::move(solver);
    winner_setup = setup;
  }
  if (!floored.empty())
    skipped.push_back(floored +
                      " (the generic loop's kernel launches alone take longer than the best "
                      "fused loop's " +
                      micro(best) + ")");
  if (timed.empty())
    throw InputError("--format/--kernel auto: no candidate could be built for this matrix");
  std::stable_sort(timed.begin(), timed.end(),
                   [](const InspectedCandidate& a, const InspectedCandidate& b) {
                     return a.median_seconds < b.median_seconds;
                   });
  result.inspect_seconds = since(start) - winner_setup;
  inspection.reason = explain(timed, skipped);
  result.solver->note_inspection(inspection.reason);
  return inspection;
}

long inspector_runs() { return runs.load(); }

}  // namespace cgs
