// The --format/--kernel auto inspector (solver/autotune.hpp). Which candidate wins depends on
// the machine, so nothing here asserts a winner: only that the choice is a valid candidate, that
// the solve with it equals the explicit choice's, that the guards hold and the cost is small.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "bench/lib/auto_verdict.hpp"
#include "solver/autotune.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

SolveOptions auto_options(Device device = Device::omp) {
  SolveOptions o;
  o.backend.device = device;
  o.auto_format = true;
  o.cg.tol = 1e-10;
  return o;
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
    const AutoChoice choice = choose_backend(A, auto_options(device));
    REQUIRE_FALSE(choice.timed.empty());
    CHECK(choice.timed.size() <= 8);
    const AutoCandidate& best = choice.timed.front();
    CHECK(choice.backend.format == best.format);
    CHECK(choice.sort_rows == best.sort_rows);
    CHECK(choice.backend.device == device);
    for (const AutoCandidate& c : choice.timed) {
      CHECK(c.median_seconds > 0);
      CHECK(c.products > 0);
      CHECK(c.products <= 4);
      CHECK(best.median_seconds <= c.median_seconds);
    }
    CHECK(contains(choice.reason, best.label()));
    CHECK(contains(choice.reason, "per CG iteration"));
    CHECK(choice.seconds > 0);
  }
}

TEST_CASE("--format auto solves to the same answer as its choice asked for explicitly") {
  const CsrMatrix<double> A = poisson2d(30);
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  for (Precision precision : {Precision::double_, Precision::single}) {
    SolveOptions o = auto_options();
    o.precision = precision;
    if (precision == Precision::single) o.cg.tol = 1e-5;
    std::vector<double> x_auto;
    const SolveReport automatic = solve_system(A, b, x_auto, o);
    REQUIRE(automatic.cg.ok());
    CHECK(automatic.autotuned);
    CHECK_FALSE(automatic.auto_reason.empty());
    CHECK(automatic.times.autotune_seconds > 0);

    SolveOptions explicit_choice = o;
    explicit_choice.auto_format = false;
    explicit_choice.backend.format = automatic.auto_format;
    explicit_choice.backend.kernel = automatic.auto_kernel;
    explicit_choice.sort_rows = automatic.auto_sort_rows;
    std::vector<double> x_explicit;
    const SolveReport asked = solve_system(A, b, x_explicit, explicit_choice);
    CHECK_FALSE(asked.autotuned);
    CHECK(asked.times.autotune_seconds == 0);
    CHECK(asked.backend_name == automatic.backend_name);
    CHECK(max_difference(x_auto, x_explicit) < (precision == Precision::single ? 1e-4 : 1e-9));
  }
}

TEST_CASE("ELL is never picked, nor timed, when the ELL guard would refuse it") {
  // One row of 1500 among rows of at most 8: ELL would store ~190x the nonzeros.
  const CsrMatrix<double> A = random_matrix(2000, 8, 3, 0, 1500);
  const AutoChoice choice = choose_backend(A, auto_options());
  CHECK(choice.backend.format != Format::ell);
  for (const AutoCandidate& c : choice.timed) CHECK(c.format != Format::ell);
  CHECK(contains(choice.reason, "skipped"));
  CHECK(contains(choice.reason, "ell (fill"));
}

TEST_CASE("the inspector's trials add up to little against a solve of a moderately sized matrix") {
  // 2D Poisson 200 x 200 (n = 40,000): every candidate's trials (one warm-up and its timed
  // ones, 10 iterations each) must come to at most half of a 1000-iteration solve. Counted, not
  // timed, so that a busy machine cannot fail it; the benchmarks report the time (cgbench's
  // auto rows).
  const CsrMatrix<double> A = poisson2d(200);
  const AutoChoice choice = choose_backend(A, auto_options());
  REQUIRE_FALSE(choice.timed.empty());
  long trial_iterations = 0;
  for (const AutoCandidate& c : choice.timed) {
    CHECK(c.products >= 1);
    trial_iterations += (c.products + 1) * 10;
  }
  MESSAGE("inspector " << choice.seconds * 1e3 << " ms, " << trial_iterations
                       << " trial iterations: " << choice.reason);
  CHECK(trial_iterations <= 500);
}

TEST_CASE("with a fixed format the inspector only decides what it was asked to") {
  // --kernel auto alone on the CPU has no kernels to choose from: one candidate, the format
  // and row order asked for.
  const CsrMatrix<double> A = poisson2d(20);
  SolveOptions o;
  o.backend.format = Format::hll;
  o.sort_rows = true;
  o.auto_kernel = true;
  const AutoChoice choice = choose_backend(A, o);
  REQUIRE(choice.timed.size() == 1);
  CHECK(choice.backend.format == Format::hll);
  CHECK(choice.sort_rows);
}

TEST_CASE("the solve runs on the inspector's winner: exactly the answer of that choice by hand") {
  const CsrMatrix<double> A = random_spd(3000, 4, 11);  // uneven rows: sorting is tried
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  for (Device device : {Device::serial, Device::omp}) {
    CAPTURE(to_string(device));
    SolveOptions o = auto_options(device);
    o.cg.tol = 0;  // a fixed number of iterations, so that rounding cannot change the count
    o.cg.max_iters = 60;
    const long before = inspector_runs();
    std::vector<double> x_auto;
    const SolveReport automatic = solve_system(A, b, x_auto, o);
    CHECK(inspector_runs() - before == 1);  // once, and the winner is not rebuilt by inspecting

    SolveOptions by_hand = o;
    by_hand.auto_format = false;
    by_hand.backend.format = automatic.auto_format;
    by_hand.sort_rows = automatic.auto_sort_rows;
    std::vector<double> x_hand;
    const SolveReport hand = solve_system(A, b, x_hand, by_hand);
    CHECK(inspector_runs() - before == 1);  // no inspector without auto
    CHECK(hand.backend_name == automatic.backend_name);
    CHECK(hand.cg.iterations == automatic.cg.iterations);
    CHECK(x_hand == x_auto);  // bit for bit: the same matrix, row order and parts
  }
}

TEST_CASE("the inspector hands over its winner built, and leaves the build out of its cost") {
  const CsrMatrix<double> A = random_spd(2000, 4, 5);
  SolveOptions o;  // one candidate: hll with sorted rows, so the winner is known
  o.backend.format = Format::hll;
  o.sort_rows = true;
  o.auto_kernel = true;
  const AutoChoice choice = choose_backend(A, o);
  REQUIRE(choice.built_double.backend);
  CHECK_FALSE(choice.built_float.backend);
  CHECK(choice.built_double.backend->name().rfind("hll", 0) == 0);
  CHECK(choice.built_double.permutation.new_to_old.size() == std::size_t(A.rows));
  CHECK(choice.built_double.sort_seconds > 0);
  CHECK(choice.built_double.convert_seconds > 0);
  CHECK(choice.seconds > 0);
  CHECK(choice.thread_start_seconds > 0);  // the OpenMP device: the team is started apart

  // The solve reports the winner's build as sort and build format, as a hand choice would.
  const std::vector<double> b(A.rows, 1.0);
  std::vector<double> x;
  const SolveReport report = solve_system(A, b, x, o);
  CHECK(report.cg.ok());
  CHECK(report.times.sort_seconds > 0);
  CHECK(report.times.convert_seconds > 0);
  CHECK(report.times.autotune_seconds > 0);

  SolveOptions single = o;
  single.precision = Precision::single;
  const AutoChoice float_choice = choose_backend(A, single);
  CHECK(float_choice.built_float.backend);
  CHECK_FALSE(float_choice.built_double.backend);
}

TEST_CASE("build_backend + solve_with_backend is solve_system, and the backend can be reused") {
  const CsrMatrix<double> A = random_spd(1500, 3, 9);
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  SolveOptions o;
  o.backend.device = Device::serial;
  o.backend.format = Format::ell;
  o.sort_rows = true;
  o.preconditioner = Preconditioner::jacobi;
  o.cg.tol = 1e-10;
  std::vector<double> x_system, x_first, x_again;
  solve_system(A, b, x_system, o);
  BuiltBackend<double> built = build_backend<double>(A, o);
  solve_with_backend(A, b, x_first, o, built);
  solve_with_backend(A, b, x_again, o, built);
  CHECK(x_first == x_system);
  CHECK(x_again == x_system);
}

TEST_CASE("a prepared solve runs again and again to exactly solve_system's answer") {
  // What the inspector relies on: one set-up, several runs, each as a fresh solve. n = 2500
  // with ~9 entries a row: large enough for the OpenMP device to consider its thread team.
  const CsrMatrix<double> A = random_spd(2500, 4, 21);
  const std::vector<double> D = to_dense(A);  // the independent check of b - A x
  auto residual_norm = [&](const std::vector<double>& b, const std::vector<double>& x) {
    double sum = 0;
    for (index_t r = 0; r < A.rows; ++r) {
      double ax = 0;
      for (index_t c = 0; c < A.cols; ++c) ax += D[std::size_t(r) * A.cols + c] * x[c];
      sum += (b[r] - ax) * (b[r] - ax);
    }
    return std::sqrt(sum);
  };
  const std::vector<double> b = multiply(A, random_vector(std::size_t(A.rows), 4));
  const double b_norm = norm2(b);
  struct Loop {
    Device device;
    bool fused;
    FusedCpuLoop choice;  // named: automatic may time the two differently from run to run
  };
  // The generic loop only on the serial device: OpenMP reductions may add in any order.
  for (Loop loop :
       {Loop{Device::serial, true, FusedCpuLoop::automatic},
        Loop{Device::omp, true, FusedCpuLoop::serial}, Loop{Device::omp, true, FusedCpuLoop::team},
        Loop{Device::serial, false, FusedCpuLoop::automatic}})
    for (Format format : {Format::csr, Format::hll})
      for (bool jacobi : {false, true})
        for (bool sorted : {false, true}) {
          CAPTURE(to_string(loop.device));
          CAPTURE(loop.fused);
          CAPTURE(to_string(format));
          CAPTURE(jacobi);
          CAPTURE(sorted);
          SolveOptions o;
          o.backend.device = loop.device;
          o.backend.format = format;
          o.fused_cpu_loop = loop.fused;
          o.fused_cpu_choice = loop.choice;
          o.sort_rows = sorted;
          o.preconditioner = jacobi ? Preconditioner::jacobi : Preconditioner::none;
          o.cg.tol = 1e-10;
          std::vector<double> x_system;
          const SolveReport once = solve_system(A, b, x_system, o);
          REQUIRE(once.cg.ok());

          BuiltBackend<double> built = build_backend<double>(A, o);
          PreparedSolve<double> prepared(A, b, o, built);
          for (int run = 0; run < 2; ++run) {
            CAPTURE(run);
            std::vector<double> x;  // zero, as solve_system's
            const SolveReport report = prepared.run(x);
            CHECK(report.cg.ok());
            CHECK(report.cg.iterations == once.cg.iterations);
            CHECK(report.cg_loop == once.cg_loop);
            CHECK(x == x_system);
            CHECK(residual_norm(b, x) <= 1e-8 * b_norm);
            CHECK(report.true_relative_residual ==
                  doctest::Approx(residual_norm(b, x) / b_norm).epsilon(1e-2).scale(1e-14));
          }
        }
}

TEST_CASE("the inspector decides serial or team once, and the solve runs what it decided") {
  // 9,600 entries and rows: between the bounds, so automatic times both loops.
  const CsrMatrix<double> A = poisson2d(40);
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  SolveOptions o;
  o.backend.device = Device::omp;
  o.backend.threads = 2;
  o.auto_format = true;
  o.cg.tol = 1e-10;
  const AutoChoice choice = choose_backend(A, o);
  REQUIRE(choice.cpu_loop.has_value());
  std::vector<double> x;
  const SolveReport report = solve_system(A, b, x, o);  // inspects again: may decide otherwise
  CHECK(report.cg.ok());
  CHECK(report.cg_loop.rfind("fused", 0) == 0);
  // Handing a decision in is obeyed, whatever timing would say.
  for (bool team : {false, true}) {
    SolveOptions named = o;
    named.auto_format = false;
    named.resolved_cpu_loop = ResolvedCpuLoop{team, team ? "" : "given"};
    std::vector<double> y;
    const SolveReport r = solve_system(A, b, y, named);
    CHECK(r.cg_loop == (team ? "fused" : "fused (serial: given)"));
    for (double e : y) CHECK(e == doctest::Approx(1.0).epsilon(1e-8));
  }
  // Without the fused loop (or off the OpenMP device) there is nothing to decide.
  SolveOptions generic = o;
  generic.fused_cpu_loop = false;
  CHECK_FALSE(choose_backend(A, generic).cpu_loop.has_value());
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
        SolveOptions o;
        o.backend.device = device;
        o.backend.format = Format::hll;
        o.sort_rows = sort_rows;
        o.auto_format = auto_format;
        o.reorder_rcm = true;
        o.preconditioner = Preconditioner::jacobi;
        o.cg.tol = 1e-12;
        std::vector<double> x;
        const SolveReport report = solve_system(A, b, x, o);
        REQUIRE(report.cg.ok());
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
