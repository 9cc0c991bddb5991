// teamsweep: how many OpenMP threads the fused CPU CG loop should use for a system of a given
// size, on this machine. For every matrix it times the fused loop (solver/fused/cpu_loop.hpp) on
// one thread and as a thread team of each size in --threads, plus the automatic choice and
// Eigen's ConjugateGradient on all threads, and prints microseconds per CG iteration (medians).
// "auto" is what the planner (solver/plan.cpp) picks (serial or all threads; timed between
// kNeverTeamWork and kAlwaysTeamWork), auto/best its cost against the best team size timed.
//
//   teamsweep [--threads 2,4,8,16] [--format csr] [--jacobi] [--rcm] [--runs 9] MATRIX...
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <iostream>
#include <sstream>

#include "bench/lib/bench_util.hpp"
#include "bench/lib/references.hpp"
#include "formats/convert.hpp"
#include "formats/row_order.hpp"
#include "solver/fused/team_barrier.hpp"
#include "solver/solver.hpp"
#include "spmv/backend.hpp"

namespace cgs::bench {
namespace {

struct SweepOptions {
  std::vector<int> teams{2, 4, 8, 16};
  std::string format = "csr";
  bool jacobi = false;
  bool rcm = false;
  int runs = 9;
  long iterations = 200;  // per solve; tol 0, so every solve runs them all
  std::vector<std::string> matrices;
};

// Median seconds per iteration of `runs` fused solves with `threads` threads (1: the serial
// device), the loop as asked (automatic: what the planner picks).
double fused_seconds(const CsrMatrix<double>& A, const std::vector<double>& b,
                     const SweepOptions& o, int threads, CpuLoopAsk loop) {
  SolveRequest r;
  r.backend.format = parse_format(o.format);
  r.backend.device = threads == 1 ? Device::serial : Device::omp;
  r.backend.threads = threads;
  r.precond = parse_precond(o.jacobi ? "jacobi" : "none");
  r.cpu_loop = loop;
  auto solver = make_solver(make_plan(r, A));
  solver->analyze(A);
  CgOptions cg = solver->plan().cg;
  cg.tol = 0;
  cg.atol = 0;
  cg.max_iters = o.iterations;
  cg.time_spmv = false;
  std::vector<double> per_iteration;
  for (int run = 0; run <= o.runs; ++run) {
    std::vector<double> x;
    const CgResult res = solver->solve(b, x, false, &cg).cg;
    if (run > 0 && res.iterations > 0) per_iteration.push_back(res.solve_seconds / res.iterations);
  }
  return median(per_iteration);
}

double eigen_seconds(const CsrMatrix<double>& A, const std::vector<double>& b,
                     const SweepOptions& o, int threads) {
  EigenCg eigen(A, threads);
  CgRequest request;
  request.iterations = o.iterations;
  request.jacobi = o.jacobi;
  std::vector<double> per_iteration;
  for (int run = 0; run <= o.runs; ++run) {
    const CgRun r = eigen.run(b, request);
    if (run > 0 && r.iterations > 0) per_iteration.push_back(r.seconds / r.iterations);
  }
  return median(per_iteration);
}

std::string micro(double seconds) { return format_number(seconds * 1e6); }

// Seconds per round of `rounds` rounds of two barriers with every thread's partial sum read in
// between, as an iteration of the team loop has: the team barrier or `omp barrier`. Median of 5.
double barrier_round_seconds(int threads, bool openmp, int rounds = 2000) {
  struct alignas(64) Slot {
    double value = 0;
  };
  std::vector<double> samples;
  for (int run = 0; run < 5; ++run) {
    std::vector<Slot> slot(threads);
    TeamBarrier barrier(threads);
    double seconds = 0;
#pragma omp parallel num_threads(threads)
    {
      const int me = omp_get_thread_num(), team = omp_get_num_threads();
      std::uint64_t epoch = 0;
      auto sync = [&] {
        if (openmp) {
#pragma omp barrier
        } else {
          barrier.wait(me, ++epoch);
        }
      };
      sync();
      const auto start = std::chrono::steady_clock::now();
      double sum = 0;
      for (int k = 0; k < rounds && team == threads; ++k) {
        slot[me].value = sum + 1;
        sync();
        sum = 0;
        for (const Slot& s : slot) sum += s.value;
        sync();
      }
      if (me == 0)
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    samples.push_back(seconds / rounds);
  }
  return median(samples);
}

int sweep(int argc, char** argv) {
  SweepOptions o;
  CLI::App app{"teamsweep: fused CPU CG per iteration by thread-team size"};
  app.add_option("--threads", o.teams, "team sizes to time (besides 1)")->delimiter(',');
  app.add_option("--format", o.format, "storage format")->capture_default_str();
  app.add_flag("--jacobi", o.jacobi, "Jacobi-preconditioned CG");
  app.add_flag("--rcm", o.rcm, "renumber by reverse Cuthill-McKee first (cgsolve --rcm)");
  app.add_option("--runs", o.runs, "timed solves per cell (median)")->capture_default_str();
  app.add_option("--iterations", o.iterations, "iterations per solve")->capture_default_str();
  app.add_option("matrices", o.matrices, "matrix files, directories or gen: specs")->required();
  CLI11_PARSE(app, argc, argv);

  const int all = omp_get_max_threads();
  std::cout << "two barriers + partial sums per round, us (team barrier / omp barrier):";
  for (int t : o.teams)
    std::cout << "  " << t << ": " << micro(barrier_round_seconds(t, false)) << " / "
              << micro(barrier_round_seconds(t, true));
  std::cout << '\n';
  std::vector<std::string> headers{"matrix", "n", "nnz+n", "Eigen x" + std::to_string(all), "1"};
  for (int t : o.teams) headers.push_back(std::to_string(t));
  headers.insert(headers.end(), {"best team", "auto", "auto/best"});
  TextTable table(headers);
  for (const std::string& spec : expand_matrix_args(o.matrices)) {
    LoadedMatrix m = load_benchmark_matrix(spec);
    if (o.rcm) m.A = permute_symmetric(m.A, reverse_cuthill_mckee(m.A));
    const std::vector<double> b = random_vector(std::size_t(m.A.rows), 7, 0.0, 1.0);
    std::vector<std::string> row{m.label, std::to_string(m.A.rows),
                                 std::to_string(long(m.A.nnz()) + m.A.rows),
                                 micro(eigen_seconds(m.A, b, o, all))};
    double best = fused_seconds(m.A, b, o, 1, CpuLoopAsk::serial);
    int best_team = 1;
    row.push_back(micro(best));
    for (int t : o.teams) {
      const double s = fused_seconds(m.A, b, o, t, CpuLoopAsk::team);
      row.push_back(micro(s));
      if (s < best) best = s, best_team = t;
    }
    const double chosen = fused_seconds(m.A, b, o, all, CpuLoopAsk::automatic);
    row.insert(row.end(), {std::to_string(best_team), micro(chosen), format_number(chosen / best)});
    table.add_row(row);
    std::cout << m.label << " done\n" << std::flush;
  }
  std::cout << "us per CG iteration (" << o.format << (o.jacobi ? ", Jacobi" : "")
            << (o.rcm ? ", RCM order" : "") << ", median of " << o.runs << " solves of "
            << o.iterations << " iterations)\n"
            << table.str();
  return 0;
}

}  // namespace
}  // namespace cgs::bench

int main(int argc, char** argv) {
  return cgs::bench::guarded_main("teamsweep", cgs::bench::sweep, argc, argv);
}
