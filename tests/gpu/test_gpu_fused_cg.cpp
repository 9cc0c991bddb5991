// The fused GPU CG loops (solver/cuda/fused_cg.hpp: persistent kernel, CUDA graph) against the
// generic GPU loop and the CPU: same status, iterations within a few, solutions to tolerance,
// for every format and kernel with a row function (CSR a thread or a lane group per row, ELL,
// HLL, COO through its row offsets), float and double, plain and Jacobi; the SpMV pass timed
// inside the loop; and the edge cases (n = 1, n = 33, b = 0, breakdown, max iterations, exact
// converged_at, fallback).
#include <cmath>
#include <memory>

#include "gpu_cg_util.hpp"
#include "solver/inspector.hpp"
#include "solver/solve.hpp"

namespace cgs {
namespace {

using namespace gputest;

BackendOptions gpu_backend(Format format, const char* kernel) {
  BackendOptions options;
  options.device = Device::gpu;
  options.format = format;
  options.kernel = kernel;
  return options;
}

// The kernels with a row function: the ones the fused loops run.
const std::vector<std::pair<Format, const char*>>& fused_kernels() {
  static const std::vector<std::pair<Format, const char*>> kernels = {
      {Format::csr, "scalar"}, {Format::csr, "vector4"}, {Format::csr, "adaptive"},
      {Format::ell, "thread"}, {Format::hll, "thread"},  {Format::coo, "segscan"}};
  return kernels;
}

constexpr GpuLoopAsk kFusedLoops[] = {GpuLoopAsk::persistent, GpuLoopAsk::graph};

template <typename T>
void compare_loops(const NamedMatrix& matrix, bool jacobi) {
  const CsrMatrix<double>& A = matrix.A;
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 61);
  const bool is_double = sizeof(T) == 8;
  CgOptions cg;
  cg.tol = is_double ? 1e-10 : 1e-5;
  cg.max_iters = 20000;
  BackendOptions cpu;
  cpu.device = Device::serial;
  const Run reference = run_loop<T>(A, b, jacobi, cpu, GpuLoopAsk::generic, cg);
  REQUIRE(reference.result.status == CgStatus::converged);
  const double cpu_residual = true_relative_residual(A, b, reference.x);
  const long slack = is_double ? 2 : std::max(5L, reference.result.iterations / 5);

  for (const auto& [format, kernel] : fused_kernels()) {
    const BackendOptions gpu = gpu_backend(format, kernel);
    const Run generic = run_loop<T>(A, b, jacobi, gpu, GpuLoopAsk::generic, cg);
    for (GpuLoopAsk loop : kFusedLoops) {
      INFO(matrix.name << (jacobi ? ", Jacobi, " : ", ") << (is_double ? "double, " : "float, ")
                       << to_string(format) << "/" << kernel << ", " << to_string(loop));
      const Run run = run_loop<T>(A, b, jacobi, gpu, loop, cg);
      const CgResult& r = run.result;
      INFO(r.iterations << " iterations; generic GPU " << generic.result.iterations << ", CPU "
                        << reference.result.iterations);
      CHECK(r.status == CgStatus::converged);
      CHECK(r.converged_at == r.iterations);
      CHECK(std::abs(r.iterations - reference.result.iterations) <= slack);
      CHECK(std::abs(r.iterations - generic.result.iterations) <= slack);
      const double residual = true_relative_residual(A, b, run.x);
      INFO("true residual " << residual << ", CPU " << cpu_residual);
      if (is_double) {
        CHECK(residual <= 10 * cg.tol);
        CHECK(relative_difference(run.x, reference.x) <= 1e-5);
        CHECK(relative_difference(run.x, generic.x) <= 1e-5);
      } else {
        CHECK(residual <= 10 * std::max(cg.tol, cpu_residual));
      }
      // The SpMV pass, timed inside the loop: one sample per `every` iterations (persistent
      // every one, graph every 8th), each a fraction of an iteration.
      REQUIRE(r.spmv.measured());
      CHECK(r.spmv.every >= 1);
      CHECK(r.spmv.samples.size() ==
            std::size_t((r.iterations + r.spmv.every - 1) / r.spmv.every));
      double total = 0;
      for (double t : r.spmv.samples) {
        CHECK(t > 0);
        total += t;
      }
      CHECK(total < r.solve_seconds);
      CHECK(r.solve_seconds > 0);
    }
  }
}

TEST_CASE("Fused GPU CG agrees with the generic GPU loop and the CPU: loops, formats, precisions") {
  CGS_REQUIRE_GPU_OR_SKIP();
  std::vector<NamedMatrix> matrices = {{"2D Poisson 30x30", testing::poisson2d(30)}};
  if (light_level() == 0) {
    // n = 3001: not a multiple of the block size; rows of irregular length.
    matrices.push_back({"random SPD n=3001", testing::random_spd(3001, 3, 5)});
  }
  for (const NamedMatrix& matrix : matrices) {
    for (bool jacobi : {false, true}) {
      compare_loops<double>(matrix, jacobi);
      compare_loops<float>(matrix, jacobi);
    }
  }
}

// Named so that gpu-check.sh's racecheck selection ("GPU CG: breakdown*") includes it.
TEST_CASE("GPU CG: breakdown, b = 0, n = 1, n = 33 and max iterations in the fused loops") {
  CGS_REQUIRE_GPU_OR_SKIP();
  BackendOptions cpu;
  cpu.device = Device::serial;
  for (const auto& [format, kernel] : fused_kernels()) {
    const BackendOptions gpu = gpu_backend(format, kernel);
    for (GpuLoopAsk loop : kFusedLoops) {
      INFO(to_string(format) << "/" << kernel << ", " << to_string(loop));
      CgOptions cg;
      cg.tol = 1e-12;

      // diag(1, -1), b = (1, 1): p'Ap = 0 at the first iteration; x stays 0.
      CsrMatrix<double> indefinite{2, 2, {0, 1, 2}, {0, 1}, {1.0, -1.0}};
      const Run broken = run_loop<double>(indefinite, {1.0, 1.0}, false, gpu, loop, cg);
      CHECK(broken.result.status == CgStatus::breakdown);
      CHECK(broken.result.iterations == 1);
      CHECK(broken.x == std::vector<double>{0.0, 0.0});

      // An indefinite matrix that may break down later: as on the CPU.
      CsrMatrix<double> later{5, 5, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4}, {4, 3, 2, 1, -0.5}};
      const std::vector<double> ones(5, 1.0);
      const Run on_cpu = run_loop<double>(later, ones, false, cpu, GpuLoopAsk::generic, cg);
      const Run on_gpu = run_loop<double>(later, ones, false, gpu, loop, cg);
      CHECK(on_gpu.result.status == on_cpu.result.status);
      CHECK(on_gpu.result.iterations == on_cpu.result.iterations);
      CHECK(relative_difference(on_gpu.x, on_cpu.x) <= 1e-8);

      // b = 0: x = 0 without an iteration, whatever the initial state of the vectors.
      const Run zero =
          run_loop<float>(testing::poisson2d(8), std::vector<double>(64, 0.0), true, gpu, loop, cg);
      CHECK(zero.result.status == CgStatus::zero_rhs);
      CHECK(zero.x == std::vector<double>(64, 0.0));

      // n = 1 and n = 33 (one partial block), to convergence.
      for (index_t n : {1, 33}) {
        const CsrMatrix<double> A =
            n == 1 ? CsrMatrix<double>{1, 1, {0, 1}, {0}, {2.5}} : testing::random_spd(n, 2, 9);
        const std::vector<double> b = random_vector<double>(std::size_t(n), 62);
        const Run run = run_loop<double>(A, b, true, gpu, loop, cg);
        INFO("n = " << n);
        CHECK(run.result.status == CgStatus::converged);
        CHECK(run.result.iterations <= n);
        CHECK(true_relative_residual(A, b, run.x) <= 1e-10);
      }

      // Max iterations: exactly 5 run, and x is the 5th iterate (the lagging x update is done).
      CgOptions five = cg;
      five.tol = 0;
      five.max_iters = 5;
      const CsrMatrix<double> A = testing::poisson2d(12);
      const std::vector<double> b = random_vector<double>(144, 63);
      const Run fused = run_loop<double>(A, b, false, gpu, loop, five);
      const Run generic = run_loop<double>(A, b, false, gpu, GpuLoopAsk::generic, five);
      CHECK(fused.result.status == CgStatus::max_iterations);
      CHECK(fused.result.iterations == 5);
      CHECK(relative_difference(fused.x, generic.x) <= 1e-12);
    }
  }
}

TEST_CASE("Fused GPU CG: converged_at is exact, the history repeats bit for bit") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = testing::poisson2d(light_level() > 0 ? 20 : 60);
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 64);
  const double b_norm = norm2(b);
  const BackendOptions gpu = gpu_backend(Format::csr, "scalar");
  CgOptions cg;
  cg.tol = 1e-9;
  cg.record_history = true;
  cg.check_every = 16;
  const Run generic = run_loop<double>(A, b, false, gpu, GpuLoopAsk::generic, cg);
  std::vector<std::vector<double>> histories;
  for (GpuLoopAsk loop : kFusedLoops) {
    for (bool progress : {false, true}) {  // progress: the persistent loop runs in chunks
      INFO(to_string(loop) << (progress ? " with progress" : ""));
      CgOptions options = cg;
      long calls = 0;
      if (progress) options.progress = [&](long, double) { ++calls; };
      const Run run = run_loop<double>(A, b, false, gpu, loop, options);
      const CgResult& r = run.result;
      REQUIRE(r.status == CgStatus::converged);
      CHECK(r.iterations == r.converged_at);  // checked on the device every iteration
      CHECK(std::abs(r.converged_at - generic.result.converged_at) <= 1);
      REQUIRE(r.residual_history.size() == std::size_t(r.iterations) + 1);
      CHECK(r.residual_history[r.converged_at] <= cg.tol * b_norm);
      CHECK(r.residual_history[r.converged_at - 1] > cg.tol * b_norm);
      CHECK(r.relative_residual() <= cg.tol);
      if (progress) CHECK(calls > 0);
      histories.push_back(r.residual_history);
    }
  }
  // Same grid, same reductions: every loop and chunking gives the same residuals exactly.
  for (const auto& h : histories) CHECK(h == histories.front());
}

TEST_CASE("Fused GPU CG: kernels without a row function run the generic loop, and say why") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = testing::poisson2d(16);
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 65);
  for (GpuLoopAsk loop :
       {GpuLoopAsk::automatic, GpuLoopAsk::persistent, GpuLoopAsk::graph, GpuLoopAsk::generic}) {
    for (const auto& [format, kernel] :
         std::vector<std::pair<Format, const char*>>{{Format::csr, "scalar"},
                                                     {Format::csr, "stream"},
                                                     {Format::csr, "cusparse"},
                                                     {Format::coo, "segscan"},
                                                     {Format::coo, "cusparse"},
                                                     {Format::hll, "cusparse"}}) {
      SolveRequest r;
      r.backend = gpu_backend(format, kernel);
      r.gpu_loop = loop;
      r.cg.tol = 1e-10;
      std::vector<double> x;
      const SolveReport report = solve_system(A, b, x, r);
      const bool row_function = std::string(kernel) == "scalar" || std::string(kernel) == "segscan";
      INFO(to_string(format) << "/" << std::string(kernel) << ", asked " << to_string(loop)
                             << ": ran " << to_string(report.plan.loop));
      CHECK(report.cg.status == CgStatus::converged);
      CHECK(report.true_relative_residual <= 1e-9);
      CHECK(report.spmv.measured);  // every loop times its SpMV
      if (!row_function || loop == GpuLoopAsk::generic) {
        CHECK(report.plan.loop == Loop::generic);
        if (!row_function && loop != GpuLoopAsk::generic) {  // asked for, it needs no excuse
          bool said = false;
          for (const std::string& why : report.plan.reasons)
            said = said || why.find("no row function") != std::string::npos;
          CHECK(said);
        }
      } else if (loop == GpuLoopAsk::automatic) {
        CHECK(is_fused(report.plan.loop));
      } else {
        CHECK(report.plan.loop ==
              (loop == GpuLoopAsk::persistent ? Loop::persistent : Loop::graph));
      }
    }
  }
}

TEST_CASE(
    "Fused GPU CG: a solver solves again and again to the same answer, and takes new values") {
  // The inspector times several solves of one solver, netsolve one per refinement step: each
  // must be a fresh solve (x uploaded again, the graph or kernel reused on the same vectors).
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = testing::random_spd(3000, 4, 67);
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 68);
  CsrMatrix<double> B = A;  // new values, same pattern: 2 A + I
  for (index_t row = 0; row < B.rows; ++row)
    for (index_t k = B.row_ptr[row]; k < B.row_ptr[row + 1]; ++k)
      B.values[k] = 2 * B.values[k] + (B.col_idx[k] == row ? 1.0 : 0.0);
  for (const auto& [format, kernel] : fused_kernels()) {
    for (GpuLoopAsk loop :
         {GpuLoopAsk::automatic, GpuLoopAsk::persistent, GpuLoopAsk::graph, GpuLoopAsk::generic}) {
      INFO(to_string(format) << "/" << kernel << ", " << to_string(loop));
      SolveRequest r;
      r.backend = gpu_backend(format, kernel);
      r.sort_rows = format == Format::hll;
      r.precond = parse_precond("jacobi");
      r.gpu_loop = loop;
      r.cg.tol = 1e-10;
      std::vector<double> x_system;
      const SolveReport once = solve_system(A, b, x_system, r);
      REQUIRE(once.cg.status == CgStatus::converged);

      auto solver = make_solver(once.plan);
      solver->analyze(A);
      for (int run = 0; run < 2; ++run) {
        std::vector<double> x;
        const SolveReport report = solver->solve(b, x);
        CHECK(report.plan.loop == once.plan.loop);
        CHECK(report.cg.iterations == once.cg.iterations);
        CHECK(x == x_system);
        CHECK(report.true_relative_residual <= 1e-9);
      }
      solver->set_values(B);
      std::vector<double> x_set, x_fresh;
      const SolveReport updated = solver->solve(b, x_set);
      auto fresh = make_solver(once.plan);
      fresh->analyze(B);
      const SolveReport again = fresh->solve(b, x_fresh);
      CHECK(updated.cg.iterations == again.cg.iterations);
      CHECK(x_set == x_fresh);
    }
  }
}

TEST_CASE(
    "GPU --format auto: fused-loop candidates first, the generic loop's skipped when beaten") {
  // A small system, where an iteration is latency: the fused loops take a few microseconds,
  // the generic loop's separate launches tens. The pick must run a fused loop and solve.
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A = testing::poisson2d(40);
  const std::vector<double> b = random_vector<double>(std::size_t(A.rows), 69);
  SolveRequest options;
  options.backend.device = Device::gpu;
  options.format_auto = true;
  options.cg.tol = 1e-10;
  const Inspection choice = inspect_candidates(options, A);
  std::string timed;
  for (const InspectedCandidate& c : choice.timed) timed += c.label() + " ";
  std::string skipped;
  for (const std::string& s : choice.skipped) skipped += s + "; ";
  INFO("timed: " << timed << "| skipped: " << skipped << "| " << choice.reason);
  CHECK(timed.find("hll/thread") != std::string::npos);  // ours, with a fused loop
  CHECK(timed.find("csr/scalar") != std::string::npos);
  // COO is pruned before timing (it streams more bytes than CSR); cuSPARSE's CSR runs only in
  // the generic loop, so it is skipped once a fused loop beats that loop's launch overhead.
  CHECK(timed.find("coo") == std::string::npos);
  CHECK(skipped.find("coo") != std::string::npos);
  if (choice.timed.front().median_seconds < 20e-6)
    CHECK(skipped.find("csr/cusparse") != std::string::npos);
  std::vector<double> x;
  const SolveReport report = solve_system(A, b, x, options);
  CHECK(report.cg.status == CgStatus::converged);
  CHECK(is_fused(report.plan.loop));
  CHECK(report.true_relative_residual <= 1e-9);
}

}  // namespace
}  // namespace cgs
