// cgbench: conjugate gradient time per iteration and in total, for every format and kernel on
// the GPU and the CPU, against two baselines measured in the same run:
//   GPU: CG the way NVIDIA's conjugateGradient sample does it (cuSPARSE SpMV, cuBLAS dot/axpy,
//        every scalar read back to the host each iteration);
//   CPU: Eigen's ConjugateGradient (Lower|Upper) with the same number of threads.
// With --cusparse-ic0, also cuSPARSE's IC(0)-PCG (csric02 + cusparseSpSV) on the GPU, its own
// row (role "reference") beside ours with --precond ic0: set-up, solve, time to solution.
//
//   cgbench [matrices...] [--iterations 200 | --iterations 0 --tol 1e-8] [--precond NAME]
//           [--rhs random|given|FILE] [--cusparse-ic0]
//           [--devices auto|serial,cpu,gpu] [--threads T] [--sorted no|yes|both]
//           [--gpu-kernels LIST|all] [--gpu-loops generic,auto|LIST|all] [--cpu-formats LIST]
//           [--spmv-timing on|off|both] [--repeats 3] [--out-dir DIR]
//
// b = A x_true (x_true random in [0, 1)), so every system is consistent, also the singular
// semi-definite ones; --rhs given reads b from the matrix's <name>_b.mtx(.gz) beside it instead
// (data/systems), --rhs FILE from FILE (one matrix only). --iterations N (the default, 200) runs
// exactly N iterations everywhere, so times compare at equal work; --iterations 0 runs each
// solver to --tol instead. Each run is repeated --repeats times after a warm-up; the median is
// reported. Every solution is checked: its true residual ||b - A x|| / ||b|| must be finite and
// close to the baseline's (within 10x, or at least half its reduction in decades).
// Exit status: 0 all correct, 1 some solve FAILED, 2 bad input, 4 no usable GPU.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include "bench/lib/auto_verdict.hpp"
#include "bench/lib/bench_util.hpp"
#include "bench/lib/references.hpp"
#include "formats/convert.hpp"
#include "formats/matrix_market.hpp"
#include "formats/row_order.hpp"
#include "solver/plan.hpp"
#include "solver/solve.hpp"
#include "spmv/cpu/cpu_backends.hpp"

namespace cgs::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kResidualSlack = 10.0;  // ours may be this much above the baseline's

struct Options {
  std::vector<std::string> matrices;
  std::string devices = "auto";
  int threads = 0;
  std::string gpu_kernels =
      "csr:adaptive,csr:scalar,csr:stream,csr:vector,csr:cusparse,ell:thread,hll:thread,coo:"
      "segscan-shfl";
  std::string gpu_loops = "generic,auto";
  std::string cpu_formats = "csr,coo,ell,hll";
  std::string sorted = "no";
  long iterations = 200;
  double tol = 1e-8;
  long max_iterations = 20000;
  std::string preconditioner = "none";  // any name cgsolve's --precond takes
  std::string rhs = "random";           // random (b = A x_true), given (<name>_b.mtx), or a file
  bool cusparse_ic0 = false;            // the cuSPARSE IC(0)-PCG reference row on the GPU
  std::string cpu_loop = "fused";
  int repeats = 3;
  int check_every = 0;
  double max_ell_fill = 10;
  index_t hack_size = 32;
  std::size_t cpu_copy_mib = 256, gpu_copy_mib = 1024;
  std::uint64_t seed = 7;
  std::string out_dir, csv, json, commit;
  bool quiet = false;
  bool auto_row = true;  // the --format auto row per matrix and device
  // SpMV timing inside the loops: on (the default, as cgsolve runs), off, or both (each of our
  // rows twice, the second with "/untimed" in its kernel label: what the timing costs).
  std::string spmv_timing = "on";
};

// What runs in one of our rows: a request as cgsolve would make it (format, kernel, and on the
// CPU the --cpu-loop: fused, serial or team as the planner decides, or generic; on the GPU the
// --gpu-loop), planned and solved through solver/solver.hpp like any solve.
struct SolverChoice {
  KernelChoice backend;
  bool fused = false;
  bool gpu = false;
  GpuLoopAsk gpu_loop = GpuLoopAsk::generic;
  bool time_spmv = true;
  std::string kernel_label() const {
    const std::string timing = time_spmv ? "" : "/untimed";
    if (gpu)
      return (backend.kernel.empty() ? "default" : backend.kernel) + "/" + to_string(gpu_loop) +
             timing;
    return (fused ? "fused-loop" : "generic-loop") + timing;
  }
};

// One SPD system in one row order.
struct System {
  const CsrMatrix<double>* A = nullptr;
  bool sorted = false;
  std::vector<double> b, inv_diag;
  double b_norm = 0;
};

// What a solver run gives, ours or a baseline's, after repeats.
struct Measured {
  std::string solver;
  double spmv_seconds = kNaN;  // median SpMV time per iteration, as the loop timed it
  long iterations = 0;
  bool converged = false;
  double setup_seconds = kNaN;          // everything before the first solve (time to solution)
  double precond_setup_seconds = kNaN;  // of which the preconditioner's set-up
  std::string precond = "none";         // the preconditioner this solver ran
  std::vector<double> solve_seconds;    // one per repeat
  double true_residual = kNaN;
  bool failed = false;  // an error during the solves (a failed CUDA call)
  std::string note;
};

double true_relative_residual(const System& s, const std::vector<double>& x) {
  std::vector<double> r = multiply(*s.A, x);
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = s.b[i] - r[i];
  return norm2(r) / s.b_norm;
}

class CgBench {
 public:
  CgBench(const Options& options, std::vector<DeviceRun> devices)
      : options_(options), devices_(std::move(devices)) {
    request_.iterations = options.iterations;
    request_.tol = options.tol;
    request_.max_iterations = options.max_iterations;
    request_.jacobi = options.preconditioner == "jacobi";
  }

  void run_matrix(const std::string& spec, std::size_t index, std::size_t count);
  void write_outputs(const Json& meta) const;
  void print_summary() const;
  bool any_failure() const { return failures_ > 0; }

 private:
  void run_system(const LoadedMatrix& m, const System& system);
  Measured run_baseline(const System& system, const DeviceRun& device);
  Measured run_cusparse_ic0(const System& system);
  std::vector<double> right_hand_side(const LoadedMatrix& m, std::string* why) const;
  Measured run_ours(const System& system, const DeviceRun& device, const SolverChoice& choice,
                    std::size_t* min_bytes);
  void solve_ours(Measured& m, const System& system, Solver& solver);
  Json make_row(const LoadedMatrix& m, const System& system, const DeviceRun& device,
                const std::string& role, const std::string& format, const std::string& kernel,
                const Measured& run, std::size_t min_bytes, const Json* baseline);
  std::vector<SolverChoice> choices_for(Device device) const;
  std::vector<bool> timing_modes() const {
    if (options_.spmv_timing == "off") return {false};
    if (options_.spmv_timing == "both") return {true, false};
    return {true};
  }
  void run_auto(const LoadedMatrix& m, const System& system, const DeviceRun& device);
  void judge_auto_row(Json& row, const std::string& pick_format, bool pick_sorted,
                      const std::string& pick_kernel) const;
  void skip_matrix(const LoadedMatrix& m, const std::string& why);
  void progress(const std::string& text) const {
    if (!options_.quiet) std::fprintf(stderr, "%s\n", text.c_str()), std::fflush(stderr);
  }
  std::vector<Json> target_rows() const;
  std::string auto_summary() const;
  void print_auto_table() const;

  Options options_;
  std::vector<DeviceRun> devices_;
  CgRequest request_;
  std::vector<Json> results_;
  std::vector<std::string> skipped_;
  int failures_ = 0;
};

// ---------------------------------------------------------------------------------------------
void CgBench::skip_matrix(const LoadedMatrix& m, const std::string& why) {
  skipped_.push_back(m.label + ": " + why);
  progress("  skipped: " + why);
}

void CgBench::run_matrix(const std::string& spec, std::size_t index, std::size_t count) {
  const LoadedMatrix m = load_benchmark_matrix(spec);
  progress("[" + std::to_string(index + 1) + "/" + std::to_string(count) + "] " + m.label +
           ": n = " + std::to_string(m.A.rows) + ", " + std::to_string(m.A.nnz()) + " nonzeros");
  index_t row = 0, col = 0;
  if (m.A.rows != m.A.cols) return skip_matrix(m, "not square");
  if (!is_symmetric(m.A, 1e-12, &row, &col))
    return skip_matrix(
        m, "not symmetric (A(" + std::to_string(row + 1) + "," + std::to_string(col + 1) + "))");
  std::vector<double> d = diagonal(m.A);
  for (double& e : d) {
    if (!(e > 0)) return skip_matrix(m, "a diagonal entry is not positive: not SPD");
    e = 1.0 / e;
  }

  std::string why;
  std::vector<double> b = right_hand_side(m, &why);
  if (b.empty()) return skip_matrix(m, why);
  System as_given{&m.A, false, std::move(b), d, 0};
  as_given.b_norm = norm2(as_given.b);
  if (!(as_given.b_norm > 0)) return skip_matrix(m, "b = 0");
  for (bool sorted : parse_sorted_modes(options_.sorted)) {
    if (!sorted) {
      run_system(m, as_given);
      continue;
    }
    const RowPermutation P = sort_rows_by_length(m.A);
    const CsrMatrix<double> permuted = permute_symmetric(m.A, P);
    run_system(m, System{&permuted, true, P.to_new(as_given.b), P.to_new(d), as_given.b_norm});
  }
  if (options_.auto_row)
    for (const DeviceRun& device : devices_) run_auto(m, as_given, device);
}

// b = A x_true (--rhs random), or read: the matrix file's <name>_b.mtx(.gz) (--rhs given) or
// the --rhs file. Empty with *why set when there is none to read.
std::vector<double> CgBench::right_hand_side(const LoadedMatrix& m, std::string* why) const {
  if (options_.rhs == "random")
    return multiply(m.A, random_vector(m.A.rows, options_.seed, 0.0, 1.0));
  std::string path = options_.rhs;
  if (options_.rhs == "given") {
    path.clear();
    for (const char* ext : {".mtx.gz", ".mtx"}) {
      const std::string e = ext;
      if (m.spec.size() > e.size() && m.spec.compare(m.spec.size() - e.size(), e.size(), e) == 0)
        for (const char* b_ext : {"_b.mtx.gz", "_b.mtx"}) {
          const std::string candidate = m.spec.substr(0, m.spec.size() - e.size()) + b_ext;
          if (path.empty() && std::ifstream(candidate).good()) path = candidate;
        }
    }
    if (path.empty()) {
      *why = "--rhs given: no <name>_b.mtx(.gz) beside it";
      return {};
    }
  }
  progress("  b from " + path);
  return read_vector_market(path, m.A.rows);  // InputError (matrix not benchmarked) if unreadable
}

void CgBench::run_system(const LoadedMatrix& m, const System& system) {
  const std::size_t n = std::size_t(system.A->rows);
  const std::size_t vector_bytes = (request_.jacobi ? 10 : 8) * n * sizeof(double);
  for (const DeviceRun& device : devices_) {
    const Measured baseline = run_baseline(system, device);
    const std::size_t csr_bytes = min_bytes_model(Format::csr, system.A->rows, system.A->cols,
                                                  system.A->nnz(), sizeof(double), 0);
    const Json base = make_row(m, system, device, "baseline", "csr",
                               device.device == Device::gpu ? "sample" : "eigen", baseline,
                               csr_bytes + vector_bytes, nullptr);
    results_.push_back(base);
    if (device.device == Device::gpu && options_.cusparse_ic0) {
      // Its own row beside ours, measured in this process on the same system; compared with
      // the plain baseline like ours (time per iteration), its set-up in setup_ms.
      const Measured ic0 = run_cusparse_ic0(system);
      results_.push_back(make_row(m, system, device, "reference", "csr", "cusparse-ic0", ic0,
                                  csr_bytes + vector_bytes, &base));
    }
    for (const SolverChoice& choice : choices_for(device.device)) {
      std::size_t spmv_bytes = 0;
      const Measured ours = run_ours(system, device, choice, &spmv_bytes);
      results_.push_back(make_row(m, system, device, "ours", to_string(choice.backend.format),
                                  choice.kernel_label(), ours, spmv_bytes + vector_bytes, &base));
    }
  }
}

// ---------------------------------------------------------------------------------------------
template <typename Solve>
Measured repeat_solver(Measured m, int repeats, long iterations, Solve solve) {
  CgRequest warm;  // a short run: library handles, caches, page faults
  warm.iterations = std::min<long>(10, std::max<long>(1, iterations));
  solve(&warm);
  CgRun last;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    last = solve(nullptr);
    m.solve_seconds.push_back(last.seconds);
  }
  m.iterations = last.iterations;
  m.converged = last.converged;
  return m;
}

Measured CgBench::run_baseline(const System& system, const DeviceRun& device) {
  Measured m;
  m.precond = request_.jacobi ? "jacobi" : "none";  // the baselines have no other
  std::vector<double> x;
  const auto start = std::chrono::steady_clock::now();
  auto finish = [&](auto& solver, const std::string& name) {
    m.setup_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.solver = name;
    m = repeat_solver(m, options_.repeats, request_.iterations, [&](const CgRequest* warm) {
      CgRun run = solver.run(system.b, warm ? *warm : request_);
      if (!warm) x = run.x;
      return run;
    });
  };
  try {
    if (device.device == Device::gpu) {
      SampleStyleCg solver(*system.A);
      // The sample's interface has no inverse diagonal argument but this one needs it for Jacobi.
      struct Adapter {
        SampleStyleCg& s;
        const std::vector<double>& d;
        CgRun run(const std::vector<double>& b, const CgRequest& r) { return s.run(b, d, r); }
      } adapter{solver, system.inv_diag};
      finish(adapter, "sample-style cuSPARSE + cuBLAS");
    } else {
      EigenCg solver(*system.A, device.threads);
      finish(solver, "Eigen " + eigen_version() + " ConjugateGradient, " +
                         std::to_string(device.threads) + " thread(s)");
    }
  } catch (const std::exception& e) {  // a failed CUDA, cuSPARSE or cuBLAS call
    m.failed = true;
    m.note = e.what();
    if (m.solver.empty()) m.solver = device.device == Device::gpu ? "sample-style" : "Eigen";
    return m;
  }
  m.true_residual = true_relative_residual(system, x);
  return m;
}

// cuSPARSE IC(0)-PCG: setup_seconds from the host matrix (A's upload, handles, and the IC(0)
// set-up) as ours counts from make_plan; precond_setup_seconds the IC(0) set-up alone. A zero
// or non-positive pivot (IC(0) breaks down on this matrix) is a SKIP with the row named in the
// note; a failed CUDA call a FAIL.
Measured CgBench::run_cusparse_ic0(const System& system) {
  Measured m;
  m.solver = "cuSPARSE IC(0)-PCG (csric02 + SpSV)";
  m.precond = "ic0";
  std::vector<double> x;
  try {
    const auto start = std::chrono::steady_clock::now();
    CusparseIc0Cg solver(*system.A);
    m.precond_setup_seconds = solver.setup();
    m.setup_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m = repeat_solver(m, options_.repeats, request_.iterations, [&](const CgRequest* warm) {
      CgRun run = solver.run(system.b, warm ? *warm : request_);
      if (!warm) x = run.x;
      return run;
    });
  } catch (const InputError& e) {  // IC(0) broke down: no solve to time
    m.note = e.what();
    return m;
  } catch (const std::exception& e) {  // a failed CUDA, cuSPARSE or cuBLAS call
    m.failed = true;
    m.note = e.what();
    return m;
  }
  m.true_residual = true_relative_residual(system, x);
  return m;
}

std::vector<SolverChoice> CgBench::choices_for(Device device) const {
  std::vector<SolverChoice> choices;
  if (device == Device::gpu) {
    const std::string list =
        options_.gpu_kernels == "all" ? all_gpu_kernels() : options_.gpu_kernels;
    std::vector<GpuLoopAsk> loops;
    std::stringstream names(options_.gpu_loops == "all" ? "generic,graph,persistent,cluster"
                                                        : options_.gpu_loops);
    for (std::string name; std::getline(names, name, ',');) {
      if (name.empty()) continue;
      loops.push_back(name == "persistent" ? GpuLoopAsk::persistent
                      : name == "graph"    ? GpuLoopAsk::graph
                      : name == "generic"  ? GpuLoopAsk::generic
                      : name == "cluster"  ? GpuLoopAsk::cluster
                      : name == "auto"     ? GpuLoopAsk::automatic
                                           : throw InputError("unknown GPU loop '" + name + "'"));
    }
    for (const KernelChoice& k : parse_kernel_list(list))
      for (GpuLoopAsk loop : loops)
        for (bool timed : timing_modes()) choices.push_back({k, false, true, loop, timed});
    return choices;
  }
  std::vector<bool> loops{false};
  if (device == Device::omp || device == Device::serial) {
    if (options_.cpu_loop == "fused") loops = {true};
    if (options_.cpu_loop == "both") loops = {true, false};
  }
  for (const KernelChoice& k : parse_kernel_list(options_.cpu_formats))
    for (bool fused : loops)
      for (bool timed : timing_modes())
        choices.push_back({k, fused, false, GpuLoopAsk::generic, timed});
  return choices;
}

Measured CgBench::run_ours(const System& system, const DeviceRun& device,
                           const SolverChoice& choice, std::size_t* min_bytes) {
  Measured m;
  m.precond = options_.preconditioner;
  SolveRequest r;
  r.backend.format = choice.backend.format;
  r.backend.device = device.device;
  r.backend.threads = device.threads;
  r.backend.kernel = choice.backend.kernel;
  r.backend.hack_size = options_.hack_size;
  r.backend.max_ell_fill = options_.max_ell_fill;
  r.precond = parse_precond(options_.preconditioner);
  r.cpu_loop = choice.fused ? CpuLoopAsk::automatic : CpuLoopAsk::generic;
  r.gpu_loop = choice.gpu_loop;
  r.cg.check_every = options_.check_every;
  r.cg.time_spmv = choice.time_spmv;
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Solver> solver;
  try {
    const Plan plan = make_plan(r, *system.A);
    if (choice.gpu && choice.gpu_loop != GpuLoopAsk::generic && !is_fused(plan.loop)) {
      m.solver = choice.backend.label();
      m.note = plan.reasons.empty() ? "no fused loop" : plan.reasons.back();
      return m;  // SKIP: this kernel has no fused loop (the note says why)
    }
    solver = make_solver(plan);
    solver->analyze(*system.A);
  } catch (const std::exception& e) {  // ELL too wide, unknown kernel, out of device memory
    m.solver = choice.backend.label();
    m.note = e.what();
    return m;
  }
  const Plan& plan = solver->plan();
  m.solver = "cgsolve " + to_string(plan.format) + (plan.kernel.empty() ? "" : "/" + plan.kernel) +
             "/" + to_string(plan.device) + " " + to_string(plan.loop) + " loop";
  *min_bytes = min_bytes_model(plan.format, system.A->rows, system.A->cols, system.A->nnz(),
                               sizeof(double), plan.hack_size);
  m.setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  try {
    solve_ours(m, system, *solver);
  } catch (const std::exception& e) {  // reported as FAIL; the run goes on
    m.failed = true;
    m.note = e.what();
  }
  return m;
}

// The timed solves: as cgsolve runs them (the plan's loop, its check_every), with the stop rule
// of the run (a fixed number of iterations, or the tolerance).
void CgBench::solve_ours(Measured& m, const System& system, Solver& solver) {
  std::vector<double> x;
  CgOptions cg = solver.plan().cg;
  SolveReport last;
  m = repeat_solver(m, options_.repeats, request_.iterations, [&](const CgRequest* warm) {
    const CgRequest& r = warm ? *warm : request_;
    cg.tol = r.iterations > 0 ? 0.0 : r.tol;  // tol 0: never met, so exactly max_iters run
    cg.max_iters = r.iterations > 0 ? r.iterations : r.max_iterations;
    x.clear();
    last = solver.solve(system.b, x, false, &cg);
    CgRun run;
    run.seconds = last.cg.solve_seconds;
    run.iterations = last.cg.iterations;
    run.converged = last.cg.status == CgStatus::converged;
    return run;
  });
  if (last.cg.status == CgStatus::breakdown || last.cg.status == CgStatus::non_finite)
    m.note = to_string(last.cg.status);
  if (last.spmv.measured) m.spmv_seconds = last.spmv.median;
  m.precond_setup_seconds = last.times.precond_seconds;  // in analyze(), so in setup_seconds
  m.true_residual = true_relative_residual(system, x);
}

// ---------------------------------------------------------------------------------------------
Json CgBench::make_row(const LoadedMatrix& m, const System& system, const DeviceRun& device,
                       const std::string& role, const std::string& format,
                       const std::string& kernel, const Measured& run, std::size_t min_bytes,
                       const Json* baseline) {
  const bool ran = !run.solve_seconds.empty();
  const double solve = ran ? median(run.solve_seconds) : kNaN;
  const double per_iter = ran && run.iterations > 0 ? solve / double(run.iterations) : kNaN;
  double min_per_iter = kNaN;
  for (double s : run.solve_seconds)
    min_per_iter = std::fmin(min_per_iter, s / double(std::max(1L, run.iterations)));
  Json row;
  row["matrix"] = m.label;
  row["n"] = system.A->rows;
  row["nnz"] = system.A->nnz();
  row["device"] = device.label();
  row["threads"] = device.threads;
  row["sorted"] = system.sorted;
  row["role"] = role;
  row["format"] = format;
  row["kernel"] = kernel;
  row["solver"] = run.solver;
  row["preconditioner"] = run.precond;
  row["iterations"] = run.iterations;
  row["converged"] = run.converged;
  row["repeats"] = int(run.solve_seconds.size());
  row["setup_ms"] = run.setup_seconds * 1e3;
  row["precond_setup_ms"] = run.precond_setup_seconds * 1e3;
  row["solve_ms"] = solve * 1e3;
  // Time to solution: set-up (from the host matrix) + the median solve.
  row["time_to_solution_ms"] = (run.setup_seconds + solve) * 1e3;
  row["per_iter_us"] = per_iter * 1e6;
  row["per_iter_min_us"] = min_per_iter * 1e6;
  row["spmv_us"] = run.spmv_seconds * 1e6;  // the loop's own SpMV time (NaN: not measured)
  row["min_bytes_iter"] = min_bytes;
  row["gbps"] = double(min_bytes) / per_iter / 1e9;
  row["copy_gbps"] = device.copy_bandwidth / 1e9;
  row["bw_fraction"] = double(min_bytes) / per_iter / device.copy_bandwidth;
  row["true_rel_residual"] = run.true_residual;
  const double base_per_iter = baseline ? (*baseline)["per_iter_us"].get<double>() : per_iter * 1e6;
  const double base_residual =
      baseline ? (*baseline)["true_rel_residual"].get<double>() : run.true_residual;
  row["baseline"] = baseline ? (*baseline)["solver"] : Json(run.solver);
  row["baseline_per_iter_us"] = base_per_iter;
  row["speedup_vs_baseline"] = base_per_iter / (per_iter * 1e6);
  row["baseline_true_rel_residual"] = base_residual;

  // Correct: finite, no breakdown, converged where the baseline did (tolerance mode), and a
  // true residual close to the baseline's: within kResidualSlack of it, or at least half its
  // reduction in decades. After a fixed number of iterations on an ill-conditioned matrix CG's
  // residual norm swings by orders of magnitude with mere rounding (it is not monotone), so a
  // tight ratio would flag correct solvers; a broken one does not get anywhere near.
  std::string check = "PASS";
  const bool tolerance_mode = request_.iterations == 0;
  const bool baseline_converged = baseline ? (*baseline)["converged"].get<bool>() : run.converged;
  const double expected = std::fmax(base_residual, tolerance_mode ? request_.tol : 0);
  const bool close = run.true_residual <= kResidualSlack * expected + 1e-10 ||
                     (expected < 1 && std::log10(run.true_residual) <= 0.5 * std::log10(expected));
  if (run.failed)
    check = "FAIL";
  else if (!ran)
    check = "SKIP";
  else if (!std::isfinite(run.true_residual) || !run.note.empty())
    check = "FAIL";
  else if (tolerance_mode && baseline_converged && !run.converged)
    check = "FAIL";
  else if (!close)
    check = "FAIL";
  if (check == "FAIL") ++failures_;
  row["check"] = check;
  row["note"] = run.note;
  // Filled in the --format auto row only (every row has the keys: they are CSV columns).
  for (const char* key : {"auto_pick", "auto_picks", "best_solver", "within_10pct"}) row[key] = "";
  for (const char* key :
       {"inspector_ms", "inspector_pct", "best_per_iter_us", "auto_vs_best", "pick_vs_best"})
    row[key] = kNaN;
  progress("  " + device.label() + (system.sorted ? " sorted " : " ") + run.solver + ": " +
           (ran ? format_number(per_iter * 1e6) + " us/iteration, " +
                      std::to_string(run.iterations) + " iterations, residual " +
                      format_number(run.true_residual)
                : "(" + run.note + ")") +
           " " + check + (ran && !run.note.empty() ? " (" + run.note + ")" : ""));
  return row;
}

// ---------------------------------------------------------------------------------------------
// The row of `cgsolve --format auto` (on the GPU also --kernel auto): solve_system with the
// inspector, which runs again before every solve as it does in cgsolve, on the matrix as given
// (the inspector decides the row order). Its time per iteration is compared with the best of
// every combination measured above for this matrix and device (both row orders with --sorted
// both): auto_vs_best and within_10pct. pick_vs_best compares the combination auto picked, as
// measured in its own row, with the same best: it tells a bad pick from the noise of timing a
// good one twice.
void CgBench::run_auto(const LoadedMatrix& m, const System& system, const DeviceRun& device) {
  SolveRequest o;
  o.backend.device = device.device;
  o.backend.threads = device.threads;
  o.backend.hack_size = options_.hack_size;
  o.backend.max_ell_fill = options_.max_ell_fill;
  o.format_auto = true;
  o.precond = parse_precond(options_.preconditioner);
  o.cpu_loop = options_.cpu_loop == "generic" ? CpuLoopAsk::generic : CpuLoopAsk::automatic;
  o.cg.check_every = options_.check_every;
  Measured run;
  run.solver = "cgsolve --format auto";
  run.precond = options_.preconditioner;
  std::vector<double> inspector;
  std::map<std::string, int> picks;  // label -> how many of the timed solves picked it
  std::map<std::string, SolveReport> pick_of;
  std::vector<double> x;
  try {
    run = repeat_solver(run, options_.repeats, request_.iterations, [&](const CgRequest* warm) {
      const CgRequest& r = warm ? *warm : request_;
      o.cg.tol = r.iterations > 0 ? 0.0 : r.tol;
      o.cg.max_iters = r.iterations > 0 ? r.iterations : r.max_iterations;
      x.clear();
      const SolveReport report = solve_system(*system.A, system.b, x, o);
      if (!warm) {
        inspector.push_back(report.times.inspect_seconds);
        const std::string label = to_string(report.plan.format) +
                                  (report.plan.kernel.empty() ? "" : "/" + report.plan.kernel) +
                                  (report.plan.sort_rows ? " sorted" : "");
        ++picks[label];
        pick_of[label] = report;
      }
      CgRun out;
      out.iterations = report.cg.iterations;
      out.seconds = report.cg.solve_seconds;
      out.converged = report.cg.status == CgStatus::converged;
      return out;
    });
    run.true_residual = true_relative_residual(system, x);
  } catch (const std::exception& e) {  // no candidate could be built, a failed CUDA call
    run.failed = true;
    run.note = e.what();
  }
  std::string pick, all_picks;
  for (const auto& [label, count] : picks) {
    if (pick.empty() || count > picks[pick]) pick = label;
    all_picks += (all_picks.empty() ? "" : ", ") + label + " x" + std::to_string(count);
  }
  const SolveReport* chosen = pick.empty() ? nullptr : &pick_of[pick];
  const std::string format = chosen ? to_string(chosen->plan.format) : "auto";
  const std::size_t n = std::size_t(system.A->rows);
  const std::size_t min_bytes =
      (request_.jacobi ? 10 : 8) * n * sizeof(double) +
      (chosen ? min_bytes_model(chosen->plan.format, system.A->rows, system.A->cols,
                                system.A->nnz(), sizeof(double), options_.hack_size)
              : 0);
  const Json* base = nullptr;
  for (const Json& r : results_)
    if (r["matrix"] == m.label && r["device"] == device.label() && r["role"] == "baseline" &&
        !r["sorted"].get<bool>())
      base = &r;
  Json row = make_row(m, system, device, "auto", format, "auto", run, min_bytes, base);
  row["auto_pick"] = pick;
  row["auto_picks"] = all_picks;
  const double solve = run.solve_seconds.empty() ? kNaN : median(run.solve_seconds);
  row["inspector_ms"] = inspector.empty() ? kNaN : median(inspector) * 1e3;
  row["inspector_pct"] = inspector.empty() ? kNaN : 100 * median(inspector) / solve;
  if (chosen) {
    const std::string kernel = device.device == Device::gpu        ? chosen->plan.kernel + "/auto"
                               : o.cpu_loop != CpuLoopAsk::generic ? "fused-loop"
                                                                   : "generic-loop";
    judge_auto_row(row, format, chosen->plan.sort_rows, kernel);
  }
  progress("  " + device.label() + " auto picked " + pick + ": " +
           format_number(row["per_iter_us"].get<double>()) + " us/iteration, " +
           format_number(row["auto_vs_best"].get<double>()) + "x the best (" +
           text(row["best_solver"]) + "), within 10%: " + text(row["within_10pct"]) +
           "; inspector " + format_number(row["inspector_ms"].get<double>()) + " ms");
  results_.push_back(row);
}

// Fills best_*, auto_vs_best, within_10pct and pick_vs_best of an auto row from the rows of
// the same matrix and device measured before it.
void CgBench::judge_auto_row(Json& row, const std::string& pick_format, bool pick_sorted,
                             const std::string& pick_kernel) const {
  std::vector<Measurement> measured;
  double pick_us = kNaN;
  for (const Json& r : results_) {
    if (r["matrix"] != row["matrix"] || r["device"] != row["device"] || r["role"] != "ours" ||
        r["check"] != "PASS")
      continue;
    const bool sorted = r["sorted"].get<bool>();
    measured.push_back({text(r["solver"]) + (sorted ? " sorted" : ""), r["per_iter_us"]});
    if (r["format"] == pick_format && sorted == pick_sorted && r["kernel"] == pick_kernel)
      pick_us = r["per_iter_us"].get<double>();
  }
  const AutoVerdict v = judge_auto(row["per_iter_us"].get<double>(), measured);
  row["best_solver"] = v.best_label;
  row["best_per_iter_us"] = v.best_seconds;
  row["auto_vs_best"] = v.ratio;
  row["pick_vs_best"] = pick_us / v.best_seconds;
  row["within_10pct"] = row["check"] == "PASS" ? v.verdict : "n/a";
}

// ---------------------------------------------------------------------------------------------
// Issue 4, section 6: GPU per iteration at n ~ 15,000 (<= 8 us), GPU at n ~ 9M 2D Poisson
// (within 1.15x of the minimal bytes: bandwidth fraction >= 1/1.15), CPU >= 2x Eigen.
std::vector<Json> CgBench::target_rows() const {
  struct Best {
    double per_iter = kNaN, fraction = kNaN, speedup = kNaN, baseline = kNaN;
    std::string solver;
    long long n = 0;
  };
  std::map<std::pair<std::string, std::string>, Best> best;  // (matrix, device)
  for (const Json& r : results_) {
    if (r["check"] != "PASS" || r["role"] != "ours" || r["kernel"] == "cusparse") continue;
    Best& b = best[{r["matrix"].get<std::string>(), r["device"].get<std::string>()}];
    const double t = r["per_iter_us"].get<double>();
    b.n = r["n"].get<long long>();
    if (!(t >= b.per_iter)) {
      b.per_iter = t;
      b.fraction = r["bw_fraction"].get<double>();
      b.speedup = r["speedup_vs_baseline"].get<double>();
      b.baseline = r["baseline_per_iter_us"].get<double>();
      b.solver = r["solver"].get<std::string>() + (r["sorted"].get<bool>() ? " sorted" : "");
    }
  }
  std::vector<Json> targets;
  for (const auto& [key, b] : best) {
    const auto& [matrix, device] = key;
    std::string goal, status;
    if (device == "gpu" && b.n >= 10'000 && b.n <= 20'000) {
      goal = "<= 8 us/iteration (n ~ 15,000)";
      status = b.per_iter <= 8.0 ? "met" : "MISSED";
    } else if (device == "gpu" && matrix.rfind("gen:poisson2d", 0) == 0 && b.n >= 8'000'000) {
      goal = "<= 1.15x minimal bytes (n ~ 9M 2D Poisson)";
      status = b.fraction >= 1 / 1.15 ? "met" : "MISSED";
    } else if (device != "gpu") {
      goal = ">= 2x Eigen CG, same threads";
      status = b.speedup >= 2.0 ? "met" : "MISSED";
    } else {
      continue;
    }
    targets.push_back(Json{{"matrix", matrix},
                           {"device", device},
                           {"n", b.n},
                           {"best_solver", b.solver},
                           {"per_iter_us", b.per_iter},
                           {"baseline_per_iter_us", b.baseline},
                           {"speedup_vs_baseline", b.speedup},
                           {"bw_fraction", b.fraction},
                           {"goal", goal},
                           {"status", status}});
  }
  return targets;
}

void CgBench::write_outputs(const Json& meta) const {
  const std::string dir = options_.out_dir;
  write_csv(output_path(dir, "cg.csv", options_.csv), results_);
  write_csv(output_path(dir, "cg_targets.csv", ""), target_rows());
  Json document;
  document["meta"] = meta;
  document["devices"] = Json::array();
  for (const DeviceRun& d : devices_) document["devices"].push_back(to_json(d));
  document["settings"] = {
      {"iterations", options_.iterations},
      {"tol", options_.tol},
      {"max_iterations", options_.max_iterations},
      {"preconditioner", options_.preconditioner},
      {"cusparse_ic0", options_.cusparse_ic0},
      {"repeats", options_.repeats},
      {"check_every", options_.check_every},
      {"cpu_loop", options_.cpu_loop},
      {"sorted", options_.sorted},
      {"rhs", options_.rhs == "random"  ? "b = A x_true, x_true uniform in [0, 1)"
              : options_.rhs == "given" ? "the matrix's <name>_b.mtx(.gz)"
                                        : options_.rhs},
      {"min_bytes_model",
       "SpMV minimal bytes of the format + (8 or, with Jacobi, 10) n doubles of "
       "vector traffic (a triangular or other preconditioner's own traffic is not counted); see "
       "BENCHMARKS.md"}};
  document["skipped"] = skipped_;
  document["results"] = results_;
  document["targets"] = target_rows();
  document["auto_summary"] = auto_summary();
  write_json(output_path(dir, "cg.json", options_.json), document);
}

void CgBench::print_summary() const {
  for (const std::string& s : skipped_) std::cout << "skipped " << s << '\n';
  const std::vector<Json> targets = target_rows();
  if (!targets.empty()) {
    TextTable t({"CG target (issue 4)", "device", "n", "best", "us/iter", "baseline us/iter",
                 "x baseline", "%copy", "goal", "status"});
    for (const Json& r : targets) {
      t.add_row({text(r["matrix"]), text(r["device"]), std::to_string(r["n"].get<long long>()),
                 text(r["best_solver"]), format_number(r["per_iter_us"].get<double>()),
                 format_number(r["baseline_per_iter_us"].get<double>()),
                 format_number(r["speedup_vs_baseline"].get<double>()),
                 format_number(100 * r["bw_fraction"].get<double>()), text(r["goal"]),
                 text(r["status"])});
    }
    std::cout << t.str() << '\n';
  }
  TextTable table({"matrix", "n", "device", "sorted", "solver", "iters", "us/iter", "total ms",
                   "setup ms", "tts ms", "%copy", "x base", "residual", "check"});
  std::string last;
  for (const Json& r : results_) {
    if (!last.empty() && r["matrix"] != last) table.add_separator();
    last = r["matrix"].get<std::string>();
    table.add_row(
        {text(r["matrix"]), std::to_string(r["n"].get<long long>()), text(r["device"]),
         r["sorted"].get<bool>() ? "yes" : "no",
         (r["role"] == "baseline"    ? "[base] "
          : r["role"] == "reference" ? "[ref] "
                                     : "") +
             (r["role"] == "auto" ? "[auto: " + text(r["auto_pick"]) + "] " : "") +
             r["solver"].get<std::string>(),
         std::to_string(r["iterations"].get<long>()), format_number(r["per_iter_us"].get<double>()),
         format_number(r["solve_ms"].get<double>()), format_number(r["setup_ms"].get<double>()),
         format_number(r["time_to_solution_ms"].get<double>()),
         format_number(100 * r["bw_fraction"].get<double>()),
         format_number(r["speedup_vs_baseline"].get<double>()),
         format_number(r["true_rel_residual"].get<double>(), 2), text(r["check"])});
  }
  std::cout << table.str();
  std::cout
      << "us/iter = CG loop time / iterations (median of repeats); total ms = that solve; setup "
         "ms = before the first solve (plan, copies, preconditioner); tts ms = setup + total; x "
         "base = baseline time / this time; %copy = minimal bytes per iteration / time / copy "
         "bandwidth; residual = ||b - Ax|| / ||b||\n";
  print_auto_table();
  if (failures_ > 0) std::cout << failures_ << " solve(s) FAILED the residual check\n";
}

// "--format auto: 7 of 8 within 10% of the best measured combination (per iteration)"
std::string CgBench::auto_summary() const {
  std::vector<std::string> verdicts;
  for (const Json& r : results_)
    if (r["role"] == "auto") verdicts.push_back(text(r["within_10pct"]));
  if (verdicts.empty()) return "";
  return "--format auto: " + count_within(verdicts) +
         " of the best measured combination (time per CG iteration, matrix x device)";
}

void CgBench::print_auto_table() const {
  const std::string summary = auto_summary();
  if (summary.empty()) return;
  TextTable t({"--format auto", "device", "picked", "us/iter", "best measured", "us/iter",
               "auto/best", "pick/best", "inspector ms", "% of solve", "within 10%"});
  for (const Json& r : results_) {
    if (r["role"] != "auto") continue;
    t.add_row({text(r["matrix"]), text(r["device"]), text(r["auto_picks"]),
               format_number(r["per_iter_us"].get<double>()), text(r["best_solver"]),
               format_number(r["best_per_iter_us"].get<double>()),
               format_number(r["auto_vs_best"].get<double>()),
               format_number(r["pick_vs_best"].get<double>()),
               format_number(r["inspector_ms"].get<double>()),
               format_number(r["inspector_pct"].get<double>()), text(r["within_10pct"])});
  }
  std::cout << '\n' << t.str() << summary << '\n';
}

// ---------------------------------------------------------------------------------------------
Options parse_options(int argc, char** argv) {
  Options o;
  CLI::App app{"cgbench: CG per iteration against the sample-style cuSPARSE+cuBLAS loop and Eigen"};
  app.add_option("matrices,--matrix", o.matrices,
                 "SPD matrix files, directories, globs or generator specs")
      ->required();
  app.add_option("--devices", o.devices, "auto, or a list of serial, cpu, gpu")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads for cpu rows and Eigen (0 = all)")
      ->capture_default_str();
  app.add_option("--gpu-kernels", o.gpu_kernels, "format[:kernel] list, or 'all'")
      ->capture_default_str();
  app.add_option("--gpu-loops", o.gpu_loops,
                 "GPU CG loops: generic, graph, persistent, cluster, auto (list), or 'all'")
      ->capture_default_str();
  app.add_option("--cpu-formats", o.cpu_formats, "formats for serial and cpu rows")
      ->capture_default_str();
  app.add_option("--sorted", o.sorted, "row orders: no, yes or both")->capture_default_str();
  app.add_option("--iterations", o.iterations, "fixed iteration count (0: run to --tol)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--tol", o.tol, "relative tolerance when --iterations 0")->capture_default_str();
  app.add_option("--max-iters", o.max_iterations, "iteration limit when --iterations 0")
      ->capture_default_str();
  app.add_option("--precond", o.preconditioner,
                 "our preconditioner, any of cgsolve's (" + preconditioner_names() +
                     "); the baselines run jacobi with jacobi, else none")
      ->check([](const std::string& name) {
        try {
          parse_precond(name);
          return std::string();
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
      })
      ->capture_default_str();
  app.add_option("--rhs", o.rhs,
                 "b: random (b = A x_true), given (each matrix's <name>_b.mtx(.gz) beside it; "
                 "matrices without one are skipped), or a Matrix Market file (one matrix only)")
      ->capture_default_str();
  app.add_flag("--cusparse-ic0", o.cusparse_ic0,
               "also run cuSPARSE's IC(0)-PCG (csric02 + cusparseSpSV, natural order) on the GPU, "
               "a reference row per system beside ours; compare with --precond ic0");
  app.add_option("--cpu-loop", o.cpu_loop,
                 "OpenMP CG loop: fused (cgsolve's default), generic or both")
      ->check(CLI::IsMember({"fused", "generic", "both"}))
      ->capture_default_str();
  app.add_option("--repeats", o.repeats, "timed solves per row (median reported)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--check-every", o.check_every,
                 "cgsolve reads scalars every k iterations (0: device default)")
      ->capture_default_str();
  app.add_option("--hack-size", o.hack_size, "HLL hack size")->capture_default_str();
  app.add_option("--max-ell-fill", o.max_ell_fill, "skip ELL beyond this padding factor")
      ->capture_default_str();
  app.add_option("--cpu-copy-mib", o.cpu_copy_mib, "array size for the CPU copy bandwidth")
      ->capture_default_str();
  app.add_option("--gpu-copy-mib", o.gpu_copy_mib, "buffer size for the GPU copy bandwidth")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "seed of x_true")->capture_default_str();
  app.add_option("--out-dir", o.out_dir, "write cg.csv, cg.json and cg_targets.csv here");
  app.add_option("--csv", o.csv, "results CSV (overrides --out-dir's)");
  app.add_option("--json", o.json, "results JSON (overrides --out-dir's)");
  app.add_option("--commit", o.commit,
                 "commit to record (default: git rev-parse of the source tree)");
  app.add_flag("!--no-auto", o.auto_row,
               "leave out the --format auto row (cgsolve's inspector) per matrix and device");
  app.add_flag("--quiet", o.quiet, "no progress lines on stderr");
  app.add_option("--spmv-timing", o.spmv_timing,
                 "time the SpMV inside our loops: on, off, or both (each row twice: the cost)")
      ->check(CLI::IsMember({"on", "off", "both"}))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  return o;
}

int run(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const std::vector<std::string> specs = expand_matrix_args(options.matrices);
  if (options.rhs != "random" && options.rhs != "given" && specs.size() != 1)
    throw InputError("--rhs FILE goes with one matrix (" + std::to_string(specs.size()) +
                     " given); --rhs given reads each matrix's <name>_b.mtx");
  parse_sorted_modes(options.sorted);
  const std::vector<Device> devices = parse_devices(options.devices);
  if (options.cusparse_ic0 &&
      std::find(devices.begin(), devices.end(), Device::gpu) == devices.end())
    std::fprintf(stderr, "cgbench: --cusparse-ic0 runs on the GPU only; no GPU in --devices\n");
  const Json meta = run_metadata(argc, argv, options.commit);
  std::vector<DeviceRun> runs = prepare_devices(
      devices, options.threads, options.cpu_copy_mib << 20, options.gpu_copy_mib << 20);
  print_run_header(
      "cgbench", meta, runs,
      (options.iterations > 0 ? std::to_string(options.iterations) + " iterations per solve"
                              : "to tolerance " + format_number(options.tol)) +
          ", preconditioner " + options.preconditioner);

  CgBench bench(options, std::move(runs));
  return run_every_matrix(bench, specs, meta);
}

}  // namespace
}  // namespace cgs::bench

int main(int argc, char** argv) {
  return cgs::bench::guarded_main("cgbench", cgs::bench::run, argc, argv);
}
