// The --format/--kernel auto inspector (solver/inspector.hpp) and the Solver's stages
// (solver/solver.hpp). Which candidate wins depends on the machine, so nothing here asserts a
// winner: only that the choice is a valid candidate, that the solve with it equals the explicit
// choice's, that the guards hold and the cost is small; and that analyze / set_values / solve
// give what a fresh solve gives.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "bench/lib/auto_verdict.hpp"
#include "formats/generators.hpp"
#include "solver/inspector.hpp"
#include "solver/solve.hpp"
#include "spmv/kernel_registry.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

SolveRequest auto_request(Device device = Device::omp) {
  SolveRequest r;
  r.backend.device = device;
  r.format_auto = true;
  r.cg.tol = 1e-10;
  return r;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - b[i]));
  return diff;
}

}  // namespace

TEST_CASE("the inspector's choice is one of its timed candidates, with a reason") {
  const CsrMatrix<double> A = poisson2d(40);
  for (Device device : {Device::omp, Device::serial}) {
    const Inspection inspection = inspect_candidates(auto_request(device), A);
    REQUIRE_FALSE(inspection.timed.empty());
    CHECK(inspection.timed.size() <= 8);
    const InspectedCandidate& best = inspection.timed.front();
    const Plan& plan = inspection.planned.solver->plan();
    CHECK(plan.format == best.format);
    CHECK(plan.sort_rows == best.sort_rows);
    CHECK(plan.device == device);
    for (const InspectedCandidate& c : inspection.timed) {
      CHECK(c.median_seconds > 0);
      CHECK(c.trials > 0);
      CHECK(c.trials <= 4);
      CHECK(best.median_seconds <= c.median_seconds);
    }
    CHECK(contains(plan.inspection, best.label()));
    CHECK(contains(plan.inspection, "per CG iteration"));
    CHECK(inspection.planned.inspect_seconds > 0);
  }
}

TEST_CASE("--format auto solves to the same answer as its choice asked for explicitly") {
  const CsrMatrix<double> A = poisson2d(30);
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  for (Precision precision : {Precision::double_, Precision::single}) {
    SolveRequest r = auto_request();
    r.precision = precision;
    if (precision == Precision::single) r.cg.tol = 1e-5;
    std::vector<double> x_auto;
    const SolveReport automatic = solve_system(A, b, x_auto, r);
    REQUIRE(automatic.cg.ok());
    CHECK_FALSE(automatic.plan.inspection.empty());
    CHECK(automatic.times.inspect_seconds > 0);

    SolveRequest asked_for = r;
    asked_for.format_auto = false;
    asked_for.backend.format = automatic.plan.format;
    asked_for.backend.kernel = automatic.plan.kernel;
    asked_for.sort_rows = automatic.plan.sort_rows;
    // Serial against team is timed anew by each plan between the size bounds; two timings of
    // loops a microsecond apart may differ on a loaded machine, so the loop is pinned too.
    asked_for.cpu_loop = automatic.plan.loop == Loop::team     ? CpuLoopAsk::team
                         : automatic.plan.loop == Loop::serial ? CpuLoopAsk::serial
                                                               : CpuLoopAsk::generic;
    std::vector<double> x_explicit;
    const SolveReport asked = solve_system(A, b, x_explicit, asked_for);
    CHECK(asked.plan.inspection.empty());
    CHECK(asked.times.inspect_seconds == 0);
    CHECK(asked.backend_name == automatic.backend_name);
    CHECK(asked.plan.loop == automatic.plan.loop);
    CHECK(max_difference(x_auto, x_explicit) < (precision == Precision::single ? 1e-4 : 1e-9));
  }
}

TEST_CASE("ELL is never picked, nor timed, when the ELL guard would refuse it") {
  // One row of 1500 among rows of at most 8: ELL would store ~190x the nonzeros.
  const CsrMatrix<double> A = random_matrix(2000, 8, 3, 0, 1500);
  const Inspection inspection = inspect_candidates(auto_request(), A);
  CHECK(inspection.planned.solver->plan().format != Format::ell);
  for (const InspectedCandidate& c : inspection.timed) CHECK(c.format != Format::ell);
  CHECK(contains(inspection.reason, "skipped"));
  CHECK(contains(inspection.reason, "ell (fill"));
}

TEST_CASE("the inspector's trials add up to little against a solve of a moderately sized matrix") {
  // 2D Poisson 200 x 200 (n = 40,000): every candidate's trials (one warm-up and its timed
  // ones, 10 iterations each) must come to at most half of a 1000-iteration solve. Counted, not
  // timed, so that a busy machine cannot fail it; the benchmarks report the time (cgbench's
  // auto rows).
  const CsrMatrix<double> A = poisson2d(200);
  const Inspection inspection = inspect_candidates(auto_request(), A);
  REQUIRE_FALSE(inspection.timed.empty());
  long trial_iterations = 0;
  for (const InspectedCandidate& c : inspection.timed) {
    CHECK(c.trials >= 1);
    trial_iterations += (c.trials + 1) * 10;
  }
  MESSAGE("inspector " << inspection.planned.inspect_seconds * 1e3 << " ms, " << trial_iterations
                       << " trial iterations: " << inspection.reason);
  CHECK(trial_iterations <= 500);
}

TEST_CASE("with a fixed format the inspector only decides what it was asked to") {
  // --kernel auto alone on the CPU has no kernels to choose from: one candidate, the format
  // and row order asked for.
  const CsrMatrix<double> A = poisson2d(20);
  SolveRequest r;
  r.backend.format = Format::hll;
  r.sort_rows = true;
  r.backend.kernel = "auto";
  r.backend.device = Device::serial;
  const Inspection inspection = inspect_candidates(r, A);
  REQUIRE(inspection.timed.size() == 1);
  CHECK(inspection.planned.solver->plan().format == Format::hll);
  CHECK(inspection.planned.solver->plan().sort_rows);
}

TEST_CASE("the solve runs on the inspector's winner as built, and its cost leaves the build out") {
  const CsrMatrix<double> A = poisson2d(60);
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  const long before = inspector_runs();
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, auto_request());
  CHECK(inspector_runs() == before + 1);  // inspected once, solved on what it built
  CHECK(r.cg.ok());
  CHECK(r.times.inspect_seconds > 0);
  // The winner's build is reported where a hand choice's is, not in the inspector's cost.
  CHECK(r.times.convert_seconds + r.times.reorder_seconds >= 0);
}

TEST_CASE(
    "analyze, solve, solve again: the same answer bit for bit, and set_values is a fresh "
    "analyze") {
  const CsrMatrix<double> A = random_spd(400, 5, 71);
  const std::vector<double> b = multiply(A, random_vector(400, 72));
  for (Device device : {Device::serial, Device::omp})
    for (Format format : {Format::csr, Format::hll, Format::ell, Format::coo})
      for (bool reordered : {false, true})
        for (CpuLoopAsk loop : {CpuLoopAsk::automatic, CpuLoopAsk::generic}) {
          CAPTURE(to_string(device));
          CAPTURE(to_string(format));
          CAPTURE(reordered);
          SolveRequest r;
          r.backend.device = device;
          r.backend.format = format;
          r.backend.threads = 2;
          r.backend.hack_size = 8;
          r.sort_rows = reordered;
          r.rcm = reordered;
          r.cpu_loop = loop;
          r.precond = parse_precond("jacobi");
          r.cg.tol = 1e-11;
          auto solver = make_solver(make_plan(r, A));
          solver->analyze(A);
          std::vector<double> x1, x2;
          const SolveReport first = solver->solve(b, x1);
          const SolveReport second = solver->solve(b, x2);
          CHECK(first.cg.ok());
          CHECK(x1 == x2);
          CHECK(first.cg.iterations == second.cg.iterations);

          // New values, same pattern: 2 A + I. set_values must give exactly what a solver
          // analyzed on the new matrix gives.
          CsrMatrix<double> B = A;
          for (index_t row = 0; row < B.rows; ++row)
            for (index_t k = B.row_ptr[row]; k < B.row_ptr[row + 1]; ++k)
              B.values[k] = 2 * B.values[k] + (B.col_idx[k] == row ? 1.0 : 0.0);
          solver->set_values(B);
          std::vector<double> x_set;
          const SolveReport updated = solver->solve(b, x_set);
          auto fresh = make_solver(solver->plan());
          fresh->analyze(B);
          std::vector<double> x_fresh;
          const SolveReport again = fresh->solve(b, x_fresh);
          CHECK(updated.cg.iterations == again.cg.iterations);
          CHECK(x_set == x_fresh);
          CHECK(updated.true_relative_residual <= 1e-10);
        }
}

TEST_CASE("set_values refuses a matrix with another pattern") {
  const CsrMatrix<double> A = poisson2d(6), B = poisson2d(7);
  SolveRequest r;
  auto solver = make_solver(make_plan(r, A));
  solver->analyze(A);
  CHECK_THROWS_AS(solver->set_values(B), InputError);
}

TEST_CASE("--rcm: the solve runs on the reordered system and x comes back in file order") {
  const CsrMatrix<double> A = random_spd(700, 4, 31);
  const std::vector<double> x_true = random_vector(std::size_t(A.rows), 32);
  const std::vector<double> b = multiply(A, x_true);
  for (Device device : {Device::serial, Device::omp})
    for (bool sort_rows : {false, true})
      for (bool auto_format : {false, true}) {
        CAPTURE(to_string(device));
        CAPTURE(sort_rows);
        CAPTURE(auto_format);
        SolveRequest r;
        r.backend.device = device;
        r.backend.format = Format::hll;
        r.sort_rows = sort_rows;
        r.format_auto = auto_format;
        r.rcm = true;
        r.precond = parse_precond("jacobi");
        r.cg.tol = 1e-12;
        std::vector<double> x;
        const SolveReport report = solve_system(A, b, x, r);
        REQUIRE(report.cg.ok());
        CHECK(report.plan.rcm);
        REQUIRE(x.size() == x_true.size());
        for (std::size_t i = 0; i < x.size(); ++i)
          CHECK(x[i] == doctest::Approx(x_true[i]).epsilon(1e-8));
        CHECK(report.true_relative_residual <= 1e-11);
      }
}

TEST_CASE("cgbench's --format auto verdict: within 10% of the best measured combination") {
  using namespace cgs::bench;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<Measurement> measured{
      {"csr", 10.0}, {"ell sorted", 8.0}, {"coo", nan}, {"skipped", 0.0}, {"hll", 9.0}};
  const AutoVerdict within = judge_auto(8.7, measured);
  CHECK(within.best_label == "ell sorted");
  CHECK(within.best_seconds == 8.0);
  CHECK(within.ratio == doctest::Approx(8.7 / 8.0));
  CHECK(within.verdict == "yes");
  CHECK(judge_auto(8.0 * 1.1, measured).verdict == "yes");  // the bound itself is within
  CHECK(judge_auto(8.9, measured).verdict == "no");
  CHECK(judge_auto(7.0, measured).verdict == "yes");  // faster than every measured combination
  CHECK(judge_auto(7.0, measured).ratio < 1);
  CHECK(judge_auto(nan, measured).verdict == "n/a");
  CHECK(judge_auto(5.0, {{"coo", nan}}).verdict == "n/a");
  CHECK(count_within({"yes", "no", "n/a", "yes"}) == "2 of 3 within 10%");
}

namespace {
bool any_contains(const std::vector<std::string>& texts, const std::string& part) {
  return std::any_of(texts.begin(), texts.end(),
                     [&](const std::string& t) { return contains(t, part); });
}
}  // namespace

TEST_CASE(
    "--format auto on the GPU with power-law rows: only load-balanced CSR kernels are built") {
  // The list is made from statistics before anything is built, so the GPU's list is checked
  // here without a device (issue 28: 8.5 s, then 1.1 s, of building and timing on 2M rows).
  const CsrMatrix<double> A = generate_matrix("gen:powerlaw:20000");
  std::vector<std::string> skipped;
  const std::vector<InspectedCandidate> list =
      inspection_candidates(A, auto_request(Device::gpu), skipped);
  REQUIRE_FALSE(list.empty());
  CHECK(list.size() <= 2);
  for (const InspectedCandidate& c : list) {
    CAPTURE(c.label());
    CHECK(c.format == Format::csr);
    CHECK_FALSE(c.sort_rows);
    const GpuKernel* k = find_gpu_kernel(c.format, c.kernel);
    REQUIRE(k);
    CHECK(k->balanced);
    CHECK(c.kernel != "cusparse");
  }
  CHECK(any_contains(skipped, "would serialise"));
  CHECK(any_contains(skipped, "ell (fill"));
  CHECK(any_contains(skipped, "coo (streams"));
  CHECK(any_contains(skipped, "csr/cusparse (a kernel of ours splits the same)"));
}

TEST_CASE("--format auto prunes from statistics on the CPU too; regular rows keep the GPU's list") {
  const CsrMatrix<double> A = generate_matrix("gen:powerlaw:20000");
  std::vector<std::string> skipped;
  const std::vector<InspectedCandidate> cpu = inspection_candidates(A, auto_request(), skipped);
  std::vector<std::string> labels;
  for (const InspectedCandidate& c : cpu) labels.push_back(c.label());
  // CSR unsorted, HLL both ways (its hacks hold padding sorting removes); no COO, ELL.
  CHECK(labels == std::vector<std::string>{"csr", "hll", "hll sorted"});
  // Regular rows on the GPU: the kernels with a row function are still timed.
  skipped.clear();
  const std::vector<InspectedCandidate> grid =
      inspection_candidates(poisson2d(30), auto_request(Device::gpu), skipped);
  CHECK(std::any_of(grid.begin(), grid.end(),
                    [](const InspectedCandidate& c) { return c.kernel == "scalar"; }));
  CHECK_FALSE(any_contains(skipped, "would serialise"));
}
