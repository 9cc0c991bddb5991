#include "solver/plan.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <limits>

#include "base/tuning.hpp"
#include "formats/row_order.hpp"
#include "formats/stats.hpp"
#include "solver/cuda/cluster_cg.hpp"
#include "solver/cuda/fused_cg.hpp"
#include "solver/fused/cpu_loop.hpp"
#include "spmv/kernel_registry.hpp"
#include "spmv/views.hpp"

namespace cgs {

std::string to_string(Precision precision) {
  return precision == Precision::single ? "float" : "double";
}

int default_check_every(Device device) { return device == Device::gpu ? 16 : 1; }

BackendOptions Plan::backend_options() const {
  BackendOptions o;
  o.format = format;
  o.device = device;
  o.threads = threads;
  o.kernel = kernel;
  o.hack_size = hack_size;
  o.hll_tail = hll_tail;
  o.hll_sigma = hll_sigma;
  o.block_size = block_size;
  o.blocks = blocks;
  o.max_ell_fill = max_ell_fill;
  // The fused GPU loops run their own kernels on the backend's arrays; only the generic loop
  // calls the backend's product.
  o.warm_up = !(device == Device::gpu && loop != Loop::generic);
  return o;
}

std::string Plan::summary() const {
  std::string text = to_string(format);
  if (!kernel.empty()) text += "/" + kernel;
  if (format == Format::hll) text += " (hack size " + std::to_string(hack_size) + ")";
  if (rcm && sort_rows)
    text += ", rows in reverse Cuthill-McKee order, then sorted by length";
  else if (rcm)
    text += ", rows in reverse Cuthill-McKee order";
  else if (sort_rows)
    text += ", rows sorted by length";
  else
    text += ", rows in file order";
  text += ", preconditioner " + precond.text() + ", " + to_string(loop) + " loop, " +
          to_string(precision);
  if (device == Device::omp) text += ", " + std::to_string(threads) + " threads";
  return text;
}

namespace {

using Clock = std::chrono::steady_clock;

std::string micro(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f us", seconds * 1e6);
  return text;
}

std::string count(long long n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// The kernel on the GPU: asked, or the default for the loop it will run. The fused loops need a
// row function (spmv/kernel_registry.hpp's default_fused_gpu_kernel); the generic loop, asked
// for by name, takes the kernel that measured fastest as a plain SpMV (spmvbench:
// cuSPARSE's sliced ELL for HLL, equal or up to 1.6x faster than ours, while its
// 32-bit offsets fit; cuSPARSE for COO, 1.2-2.4x the segmented scan; CSR stream for rows longer
// than 10, 1.03-1.4x cuSPARSE).
//
// Rows a row function would serialise come first (formats/stats.hpp's RowSpread): on
// gen:powerlaw:2000000 (mean 7, rows of thousands) the fused csr/scalar loop took 3,279 us an
// iteration, the generic loop with the load-balanced stream kernel 196; the
// balanced kernel splits the work by nonzeros inside the fused loops' passes, so they keep
// their fused vector updates and launch-free iterations (BENCHMARKS.md section 12).
// Up to this many nonzeros irregular rows take the balanced kernel in the fused graph loop,
// beyond it the generic loop with stream (the crossover measured at 0.9-1.1M, BENCHMARKS 12h).
constexpr index_t kBalancedFusedMaxEntries = 1000000;
}  // namespace

std::string choose_gpu_kernel(const SolveRequest& r, const MatrixStats& stats,
                              const RowSpread& spread, Plan& plan) {
  const Format format = plan.format;
  if (!r.backend.kernel.empty()) {
    require_gpu_kernel(format, r.backend.kernel);
    return r.backend.kernel;
  }
  const double mean = stats.mean_row_length;
  if (format == Format::csr && r.gpu_loop == GpuLoopAsk::automatic && spread.irregular()) {
    // Both load-balanced; which is faster depends on the size (BENCHMARKS.md 12h): the
    // balanced kernel in the fused graph loop saves the generic loop's vector launches but
    // gathers z and p through every nonzero, so it wins while those gathers are few
    // (gen:powerlaw 20k-130k rows, up to ~0.9M nonzeros: 15.3-29.5 us an iteration against
    // 20.4-29.6) and loses beyond (160k: 32.7 against 31.7; 2M: 376 against 211).
    char why[400];
    const bool fused = stats.nnz <= kBalancedFusedMaxEntries;
    std::snprintf(why, sizeof why,
                  "kernel: %s (load-balanced: rows over %d entries hold %.1f%% of the nonzeros, "
                  "the longest %d; a row per thread or lane group would serialise them; %s)",
                  fused ? "balanced" : "stream", int(spread.threshold), 100 * spread.long_share,
                  int(spread.longest),
                  fused ? "a warp per unit of nonzeros inside the fused loop's passes, for up to "
                          "1,000,000 nonzeros"
                        : "over 1,000,000 nonzeros the generic loop with stream beats the fused "
                          "loop's balanced passes, which gather z and p through every entry");
    plan.reasons.push_back(why);
    return fused ? "balanced" : "stream";
  }
  // HLL with long rows: our kernel sums the HYB tail in load-balanced pieces (formats/hll.hpp);
  // cuSPARSE's sliced ELL would pad every hack to its longest row.
  if (format == Format::hll && r.gpu_loop == GpuLoopAsk::automatic && spread.irregular()) {
    plan.reasons.push_back(
        "kernel: thread (hack rows a thread each, the long rows' tail in warp-sized pieces)");
    return "thread";
  }
  // Regular but long rows: the fused loop's row function for them (adaptive) took 43.4 us an
  // iteration on bcsstk13 (mean 42), the generic loop with stream 19.9.
  if (format == Format::csr && r.gpu_loop == GpuLoopAsk::automatic &&
      mean > kScalarCsrMaxMeanLength) {
    plan.reasons.push_back("kernel: stream (mean row length " + std::to_string(mean).substr(0, 4) +
                           ": the load-balanced generic loop beats the fused one's lane groups)");
    return "stream";
  }
  if (r.gpu_loop != GpuLoopAsk::generic) {
    const std::string kernel = default_fused_gpu_kernel(format, mean);
    plan.reasons.push_back("kernel: " + kernel + " (the " + to_string(format) +
                           " default with a row function, for the fused loop" +
                           (format == Format::csr
                                ? ", mean row length " + std::to_string(mean).substr(0, 4)
                                : std::string()) +
                           ")");
    return kernel;
  }
  std::string kernel;
  switch (format) {
    case Format::csr: kernel = mean <= kScalarCsrMaxMeanLength ? "scalar" : "stream"; break;
    case Format::ell: kernel = "thread"; break;
    case Format::hll:
      kernel = stats.hll_fill * double(stats.nnz) <= double(INT_MAX) ? "cusparse" : "thread";
      break;
    case Format::coo: kernel = "cusparse"; break;
  }
  plan.reasons.push_back("kernel: " + kernel + " (the fastest " + to_string(format) +
                         " SpMV measured, for the generic loop)");
  return kernel;
}

namespace {

// HLL's storage order (SELL-C-sigma) and HYB tail (formats/hll.hpp): what the backends will
// build (spmv/backend_factory.cpp's make_hll), and what it saves.
void explain_hll_layout(const CsrMatrix<double>& A, Plan& plan) {
  index_t sigma = plan.hll_sigma;
  HllTail tail;
  if (sigma >= 0) {
    plan.reasons.push_back(sigma > 0 ? "hll: rows sorted by length inside windows of " +
                                           std::to_string(sigma) + " rows (--hll-sigma)"
                                     : std::string("hll: rows in their own order (--hll-sigma 0)"));
    if (plan.hll_tail < 0) tail = choose_hll_tail(A, plan.hack_size, sigma);
  } else {
    const HllOrder order = choose_hll_sigma(A, plan.hack_size);
    sigma = order.sigma;
    tail = order.tail;
    if (order.sorted()) {
      char why[400];
      std::snprintf(why, sizeof why,
                    "hll: rows sorted by length inside windows of %d rows (SELL-C-sigma; the "
                    "storage order only, x and the columns keep theirs): %s hack slots and %s "
                    "tail entries instead of %s and %s in the rows' own order (%s nonzeros)",
                    int(order.sigma), count(order.tail.slots).c_str(),
                    count(order.tail.nnz).c_str(), count(order.unsorted.slots).c_str(),
                    count(order.unsorted.nnz).c_str(), count(A.nnz()).c_str());
      plan.reasons.push_back(why);
    }
  }
  if (plan.hll_tail >= 0) {
    plan.reasons.push_back("hll: rows over " + std::to_string(plan.hll_tail) +
                           " entries continue in a CSR tail (--hll-tail)");
    return;
  }
  if (!tail.any()) return;
  char why[320];
  std::snprintf(why, sizeof why,
                "hll: rows over %d entries (%d of them, %.1f%% of the nonzeros) continue in a CSR "
                "tail summed in load-balanced pieces (HYB): the hacks hold %s slots instead of "
                "%s, so the padding to long rows for which ELL is refused does not arise",
                int(tail.from), int(tail.rows),
                A.nnz() > 0 ? 100.0 * double(tail.nnz) / double(A.nnz()) : 0.0,
                count(tail.slots).c_str(), count(tail.slots_without).c_str());
  plan.reasons.push_back(why);
}

// The cluster loop (solver/cuda/cluster_cg.hpp) where it can run: CSR rows, the system in one
// cluster's shared memory; a pointwise preconditioner in up to 16 blocks, a program in one block
// (its vectors and work vectors in shared memory; the planner counts one work vector for ic0,
// chol and fsai, three for the others: cheb's; the loop checks the program itself when it is
// built). Otherwise false and why not in `why`.
bool cluster_loop_fits(const CsrMatrix<double>& A, const Plan& plan, std::string& why) {
  if (plan.format != Format::csr) {
    why = "it holds CSR rows only, not " + to_string(plan.format);
    return false;
  }
  const bool pointwise = plan.precond.name == "none" || plan.precond.name == "jacobi";
  if (plan.precond.name == "amg") {
    why = "its one block does not run amg's levels";
    return false;
  }
  ClusterProgramShape program;
  const bool one_work =
      plan.precond.name == "ic0" || plan.precond.name == "chol" || plan.precond.name == "fsai";
  program.work.assign(one_work ? 1 : 3, std::size_t(A.rows));
  const ClusterProgramShape* shape = pointwise ? nullptr : &program;
  const ClusterFit fit = plan.precision == Precision::single
                             ? cluster_fit<float>(A.rows, A.row_ptr.data(), 0, false, shape)
                             : cluster_fit<double>(A.rows, A.row_ptr.data(), 0, false, shape);
  why = fit.reason;
  return fit.fits;
}

// Whether `auto` takes the cluster loop: always for a pointwise preconditioner; for a program
// only the level-scheduled triangular solves of ic0 and chol, whose level barriers cost a grid
// sync each in the persistent loop and a block barrier (or none: sweeps) here (122-602
// levels an apply on EPANET's systems). The other programs have a few operations an apply; they
// run here when asked.
bool auto_takes_cluster(const Plan& plan) {
  const std::string& name = plan.precond.name;
  return name == "none" || name == "jacobi" || name == "ic0" || name == "chol";
}

// Cluster, persistent or graph on the GPU, or generic for a kernel without a row function.
Loop choose_gpu_loop(const SolveRequest& r, const CsrMatrix<double>& A, const MatrixStats& stats,
                     const RowSpread& spread, Plan& plan) {
  if (r.gpu_loop == GpuLoopAsk::generic) return Loop::generic;
  if (plan.format == Format::hll && r.gpu_loop == GpuLoopAsk::automatic && spread.irregular()) {
    plan.reasons.push_back(
        "loop: generic (the fused loops' row function would walk each HLL tail row on one "
        "thread; the SpMV kernel splits the tail in pieces)");
    return Loop::generic;
  }
  const GpuKernel& kernel = require_gpu_kernel(plan.format, plan.kernel);
  if (!kernel.row_function) {
    plan.reasons.push_back("loop: generic (" + to_string(plan.format) + "/" + plan.kernel +
                           " is a whole-product kernel with no row function for the fused loops)");
    return Loop::generic;
  }
  // The cluster loop walks a row per thread: not for the rows the balanced kernel was chosen for.
  const bool balanced = plan.kernel == "balanced";
  // Its passes as graph kernels: 1.16-1.4x faster than in the persistent kernel on gen:powerlaw
  // 20k-130k rows (BENCHMARKS.md 12h), where the row kernels prefer the persistent one.
  if (balanced && r.gpu_loop == GpuLoopAsk::automatic) {
    plan.reasons.push_back(
        "loop: graph (the balanced kernel's passes ran faster as graph kernels than in the "
        "persistent one)");
    return Loop::graph;
  }
  if (r.gpu_loop == GpuLoopAsk::cluster ||
      (r.gpu_loop == GpuLoopAsk::automatic && !balanced && auto_takes_cluster(plan))) {
    std::string why;
    if (cluster_loop_fits(A, plan, why)) {
      plan.reasons.push_back("loop: cluster (" + why + ")");
      return Loop::cluster;
    }
    if (r.gpu_loop == GpuLoopAsk::cluster)
      plan.reasons.push_back("loop: not cluster, as asked (" + why + ")");
    else if (plan.precond.name == "ic0" || plan.precond.name == "chol")
      plan.reasons.push_back("loop: not cluster for " + plan.precond.name + "'s levels (" + why +
                             ")");
  }
  const int lanes = plan.format == Format::csr ? csr_lanes(plan.kernel, stats.mean_row_length) : 1;
  const PersistentLimits limits = plan.precision == Precision::single
                                      ? persistent_limits<float>(plan.format, lanes)
                                      : persistent_limits<double>(plan.format, lanes);
  if (r.gpu_loop == GpuLoopAsk::graph) return Loop::graph;
  if (r.gpu_loop == GpuLoopAsk::persistent || r.gpu_loop == GpuLoopAsk::cluster) {
    if (limits.cooperative) return Loop::persistent;
    plan.reasons.push_back(
        "loop: graph (persistent asked, but the device refuses cooperative "
        "launches)");
    return Loop::graph;
  }
  // auto: measured with cgbench: the persistent kernel is 4-5% faster at
  // n ~ 15,000 (a grid sync costs less than a kernel launch), the graph 1-9% faster at n = 9M
  // (its passes stream better as separate kernels).
  const long long n = stats.rows;
  if (limits.cooperative && n <= limits.wave_rows) {
    plan.reasons.push_back("loop: persistent (n = " + count(n) + " fits one resident wave of " +
                           count(limits.wave_rows) + " threads)");
    return Loop::persistent;
  }
  plan.reasons.push_back(limits.cooperative
                             ? "loop: graph (n = " + count(n) + " exceeds one resident wave of " +
                                   count(limits.wave_rows) + " threads)"
                             : std::string("loop: graph (no cooperative launch on this device)"));
  return Loop::graph;
}

// The fastest of a few short solves from x = 0 (tol 0, 10 iterations), per iteration, after one
// to warm up.
template <typename T>
double time_cpu_loop(const Rows<T>& rows, index_t n, Preconditioner<T>& M, const std::vector<T>& b,
                     bool team) {
  constexpr int kTrialIterations = 10, kTimedTrials = 3;
  CgOptions trial;
  trial.tol = 0;
  trial.max_iters = kTrialIterations;
  trial.time_spmv = false;
  std::vector<T> x(static_cast<std::size_t>(n));
  double fastest = std::numeric_limits<double>::infinity();
  for (int run = 0; run <= kTimedTrials; ++run) {
    std::fill(x.begin(), x.end(), T(0));
    const CgResult r = fused_cpu_conjugate_gradient(rows, n, M, b.data(), x.data(), trial, team);
    if (run > 0 && r.iterations > 0) fastest = std::min(fastest, r.solve_seconds / r.iterations);
  }
  return fastest;
}

// Serial or team on the OpenMP device, timed on a CSR backend of A with b = 1 (see
// kNeverTeamWork). The team must win clearly: one thread is the steadier choice (nothing to
// wait for when the machine gets busy), and short trials of loops a microsecond apart can pick
// either.
Loop time_serial_or_team(const CsrMatrix<double>& A, int threads, Plan& plan) {
  BackendOptions csr;
  csr.format = Format::csr;
  csr.device = Device::omp;
  csr.threads = threads;
  const auto backend = make_backend(A, csr);
  const Rows<double> rows = *backend->row_view();
  const auto identity = make_preconditioner<double>(PrecondSpec{}, Device::omp, threads);
  identity->analyze(A);
  const std::vector<double> b(std::size_t(A.rows), 1.0);
  const double serial = time_cpu_loop(rows, A.rows, *identity, b, false);
  const double team = time_cpu_loop(rows, A.rows, *identity, b, true);
  constexpr double kTeamMustBeFaster = 0.9;
  const std::string times = "a team of " + std::to_string(threads) + " timed " + micro(team) +
                            " against " + micro(serial) + " per iteration on one thread";
  if (team < kTeamMustBeFaster * serial) {
    plan.reasons.push_back("loop: fused-team (" + times + ")");
    return Loop::team;
  }
  plan.reasons.push_back("loop: fused-serial (" + times + "; the team must be 10% faster)");
  return Loop::serial;
}

Loop choose_cpu_loop(const SolveRequest& r, const CsrMatrix<double>& A, Plan& plan) {
  if (r.cpu_loop == CpuLoopAsk::generic) return Loop::generic;
  if (plan.device == Device::serial) return Loop::serial;
  if (r.cpu_loop == CpuLoopAsk::serial) return Loop::serial;
  if (plan.threads <= 1) {
    plan.reasons.push_back("loop: fused-serial (one thread)");
    return Loop::serial;
  }
  if (r.cpu_loop == CpuLoopAsk::team) return Loop::team;
  const long work = long(A.nnz()) + A.rows;
  if (work < kNeverTeamWork) {
    plan.reasons.push_back("loop: fused-serial (" + count(work) +
                           " entries + rows: too small for threads)");
    return Loop::serial;
  }
  if (!team_choice_is_timed(work)) {
    plan.reasons.push_back("loop: fused-team (" + count(work) + " entries + rows)");
    return Loop::team;
  }
  return time_serial_or_team(A, plan.threads, plan);
}

}  // namespace

// ic0 in its own elimination order (levels) on a matrix whose rows are numbered as wavefronts
// already (is_wavefront_order: a grid in natural order): RCM would renumber 9M rows of a grid
// for nothing (2.3-2.7 s of ic0's set-up on 16 cores). EPANET's systems are
// numbered in input order, far from it, and keep RCM (it cut their iterations 2-4x).
namespace {
bool rcm_gains_ic0_nothing(const PrecondSpec& precond, const CsrMatrix<double>& A) {
  const bool levels = precond.argument.empty() || precond.argument == "levels";
  return precond.is("ic0") && levels && is_wavefront_order(A);
}
}  // namespace

Plan plan_as_asked(const SolveRequest& r) {
  Plan plan;
  plan.device = r.backend.device;
  plan.threads = plan.device == Device::omp
                     ? (r.backend.threads > 0 ? r.backend.threads : omp_get_max_threads())
                     : 1;
  plan.format = r.backend.format;
  plan.kernel = r.backend.kernel;
  plan.hack_size = r.backend.hack_size;
  plan.hll_tail = r.backend.hll_tail;
  plan.hll_sigma = r.backend.hll_sigma;
  plan.block_size = r.backend.block_size;
  plan.blocks = r.backend.blocks;
  plan.max_ell_fill = r.backend.max_ell_fill;
  plan.precision = r.precision;
  plan.sort_rows = r.sort_rows;
  plan.precond = r.precond;
  plan.rcm = r.rcm.value_or(find_preconditioner(r.precond.name).wants_rcm);
  plan.reasons = tuning_differences(tuning());  // what runs differently from the defaults
  return plan;
}

Plan make_plan(const SolveRequest& r, const CsrMatrix<double>& A) {
  if (r.needs_inspector())
    throw std::logic_error("make_plan: a request with auto goes through the inspector");
  if (A.rows != A.cols)
    throw InputError("CG needs a square matrix, got " + std::to_string(A.rows) + " x " +
                     std::to_string(A.cols));
  Plan plan = plan_as_asked(r);
  const PrecondEntry& precond = find_preconditioner(r.precond.name);
  if (!r.rcm && precond.wants_rcm && rcm_gains_ic0_nothing(r.precond, A)) {
    plan.rcm = false;
    plan.reasons.push_back(
        "order: the file's (its rows already form wavefronts from row 0, as reverse "
        "Cuthill-McKee would number them for ic0; --rcm renumbers anyway)");
  } else if (!r.rcm && precond.wants_rcm) {
    plan.reasons.push_back("order: reverse Cuthill-McKee (" + std::string(precond.name) +
                           " works on a banded matrix; --no-rcm keeps the file's order)");
  }
  if (!r.backend.kernel.empty() && plan.device != Device::gpu)
    throw InputError("--kernel chooses a GPU kernel; it needs --device gpu");

  const MatrixStats stats = compute_stats(A, plan.hack_size);
  if (plan.format == Format::hll) explain_hll_layout(A, plan);
  if (plan.device == Device::gpu) {
    const RowSpread spread = row_spread(A);
    plan.kernel = choose_gpu_kernel(r, stats, spread, plan);
    plan.loop = choose_gpu_loop(r, A, stats, spread, plan);
  } else {
    plan.loop = choose_cpu_loop(r, A, plan);
  }

  plan.cg = r.cg;
  if (plan.cg.check_every <= 0) plan.cg.check_every = default_check_every(plan.device);
  if (plan.cg.max_iters <= 0) plan.cg.max_iters = 10 * std::max<long>(1, A.rows);
  return plan;
}

}  // namespace cgs
