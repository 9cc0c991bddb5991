// batchbench: many small systems of one pattern at once (issue 27: the engine of scenario
// studies on the GPU), against one system at a time, in the same run on the same device.
//
//   batchbench [MATRIX...] [--batch 64] [--precond jacobi|none] [--tol 1e-10] [--repeats 7]
//              [--max-iters N]
//
// Per matrix, Jacobi-CG on b = random (seeded), x0 = 0:
//   persistent  one system, the persistent loop (the fused loop the planner takes today)
//   cluster     one system, the cluster loop (solver/cuda/cluster_cg.hpp)
//   batch       --batch systems (different right-hand sides) in one launch, one per cluster
// and per row: iterations, time per iteration (median of --repeats solves), and for the batch the
// iterations of all systems per second and its ratio to one persistent system's.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <numeric>

#include "bench/lib/bench_util.hpp"
#include "solver/cuda/cluster_cg.hpp"
#include "spmv/device_buffer.hpp"
#include "solver/solver.hpp"

namespace cgs::bench {
namespace {

struct Options {
  std::vector<std::string> matrices{"gen:poisson2d:122"};
  int batch = 64;
  std::string precond = "jacobi";
  double tol = 1e-10;
  int repeats = 7;
  long long max_iters = 0;  // per system; 0: the batch 20 n, a single solve the solver's default
};

struct Single {
  long long iterations = 0;
  double seconds = 0;  // median solve
  std::string loop;
};

Single solve_one(const CsrMatrix<double>& A, const std::vector<double>& b, const Options& o,
                 GpuLoopAsk loop) {
  SolveRequest r;
  r.backend.device = Device::gpu;
  r.backend.format = Format::csr;
  r.precond = parse_precond(o.precond);
  r.gpu_loop = loop;
  r.cg.tol = o.tol;
  if (o.max_iters > 0) r.cg.max_iters = o.max_iters;
  auto solver = make_solver(make_plan(r, A));
  solver->analyze(A);
  std::vector<double> seconds;
  Single s;
  for (int i = 0; i < o.repeats + 1; ++i) {  // the first warms up
    std::vector<double> x;
    const SolveReport report = solver->solve(b, x, false);
    if (i > 0) seconds.push_back(report.cg.solve_seconds);
    s.iterations = report.cg.iterations;
    s.loop = to_string(report.plan.loop);
  }
  s.seconds = median(seconds);
  return s;
}

// Jacobi's d = 1 / diag(A) (or none).
std::vector<double> jacobi_of(const CsrMatrix<double>& A) {
  std::vector<double> d(std::size_t(A.rows), 1.0);
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col_idx[k] == i) d[std::size_t(i)] = 1.0 / A.values[k];
  return d;
}

int run(int argc, char** argv) {
  Options o;
  CLI::App app{"batchbench: many systems of one pattern in one launch vs one at a time"};
  app.add_option("matrices", o.matrices, "matrices (files, gen: specs)");
  app.add_option("--batch", o.batch, "systems solved together")->check(CLI::PositiveNumber);
  app.add_option("--precond", o.precond, "none or jacobi")
      ->check(CLI::IsMember({"none", "jacobi"}));
  app.add_option("--tol", o.tol, "relative tolerance");
  app.add_option("--repeats", o.repeats, "timed solves per row (median)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-iters", o.max_iters,
                 "iteration limit per system (a rate over fewer iterations: shorter runs)")
      ->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  std::printf("%-34s %8s %8s | %-10s %6s %8s | %-10s %6s %8s %6s | %6s %6s %9s %12s %7s\n",
              "matrix", "n", "nnz", "loop", "its", "us/it", "loop", "its", "us/it", "blocks",
              "batch", "its", "ms", "its/s", "ratio");
  for (const std::string& spec : expand_matrix_args(o.matrices)) {
    const LoadedMatrix m = load_benchmark_matrix(spec);
    const CsrMatrix<double>& A = m.A;
    const std::size_t n = std::size_t(A.rows);
    const std::vector<double> b = random_vector(n, 1, 0.0, 1.0);
    const Single persistent = solve_one(A, b, o, GpuLoopAsk::persistent);
    const Single cluster = solve_one(A, b, o, GpuLoopAsk::cluster);

    // The batch: every system its own right-hand side, all from x0 = 0.
    std::vector<double> bs(n * std::size_t(o.batch));
    for (int s = 0; s < o.batch; ++s) {
      const std::vector<double> v = random_vector(n, 1000 + std::uint64_t(s), 0.0, 1.0);
      std::copy(v.begin(), v.end(), bs.begin() + std::ptrdiff_t(std::size_t(s) * n));
    }
    DeviceBuffer<index_t> row_ptr(Device::gpu, A.row_ptr), col_idx(Device::gpu, A.col_idx);
    DeviceBuffer<double> values(Device::gpu, A.values), b_gpu(Device::gpu, bs);
    DeviceBuffer<double> d(Device::gpu, o.precond == "jacobi" ? jacobi_of(A) : std::vector<double>(n, 1.0));
    DeviceBuffer<double> x(Device::gpu, bs.size());
    const CsrView<double> view{A.rows, row_ptr.data(), col_idx.data(), values.data(), 1, {}};
    auto engine = make_cluster_cg<double>(view, A.rows, o.precond == "jacobi" ? d.data() : nullptr, 0, true);
    CgOptions cg;
    cg.tol = o.tol;
    cg.max_iters = o.max_iters > 0 ? o.max_iters : 20 * (long long)n;
    cg.time_spmv = false;
    std::vector<double> seconds;
    long long total_iterations = 0;
    bool all_converged = true;
    for (int i = 0; i < o.repeats + 1; ++i) {
      x.upload(std::vector<double>(bs.size(), 0.0));
      const std::vector<CgResult> results =
          engine->solve_batch(b_gpu.data(), x.data(), o.batch, nullptr, nullptr, cg);
      total_iterations = 0;
      for (const CgResult& r : results) {
        total_iterations += r.iterations;
        all_converged = all_converged && r.status == CgStatus::converged;
      }
      if (i > 0) seconds.push_back(results.front().solve_seconds);
    }
    const double batch_seconds = median(seconds);
    const double persistent_rate = double(persistent.iterations) / persistent.seconds;
    const double batch_rate = double(total_iterations) / batch_seconds;
    std::printf(
        "%-34s %8zu %8zu | %-10s %6lld %8.2f | %-10s %6lld %8.2f %6d | %6d %6lld %9.3f %12.4g "
        "%7.1f%s\n",
        m.label.c_str(), n, A.values.size(), persistent.loop.c_str(), persistent.iterations,
        1e6 * persistent.seconds / double(std::max(1LL, persistent.iterations)),
        cluster.loop.c_str(), cluster.iterations,
        1e6 * cluster.seconds / double(std::max(1LL, cluster.iterations)), engine->fit().blocks,
        o.batch, total_iterations / o.batch, 1e3 * batch_seconds, batch_rate,
        batch_rate / persistent_rate, all_converged ? "" : "  (not all converged)");
  }
  std::printf("its (batch): mean per system; its/s: iterations of all systems per second; ratio: "
              "to one persistent system's iterations per second\n");
  return 0;
}

}  // namespace
}  // namespace cgs::bench

int main(int argc, char** argv) {
  return cgs::bench::guarded_main("batchbench", cgs::bench::run, argc, argv);
}
