// The --format/--kernel auto inspector (solver/autotune.hpp). Which candidate wins depends on
// the machine, so nothing here asserts a winner: only that the choice is a valid candidate, that
// the solve with it equals the explicit choice's, that the guards hold and the cost is small.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

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
      CHECK(c.products <= 20);
      CHECK(best.median_seconds <= c.median_seconds);
    }
    CHECK(contains(choice.reason, best.label()));
    CHECK(contains(choice.reason, "per product"));
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

TEST_CASE("the inspector costs little against a solve of a moderately sized matrix") {
  // 2D Poisson 200 x 200 (n = 40 000), 1000 iterations; the inspector does at most ~160
  // products plus building the candidates. The bound is loose on purpose (a busy machine must
  // not fail it): the report gives the real share.
  const CsrMatrix<double> A = poisson2d(200);
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  SolveOptions o = auto_options();
  o.cg.tol = 0;
  o.cg.max_iters = 1000;
  std::vector<double> x;
  const SolveReport report = solve_system(A, b, x, o);
  CHECK(report.cg.iterations == 1000);
  CHECK(report.times.autotune_seconds > 0);
  MESSAGE("inspector " << report.times.autotune_seconds * 1e3 << " ms, solve "
                       << report.times.solve_seconds * 1e3 << " ms: " << report.auto_reason);
  CHECK(report.times.autotune_seconds < 0.5 * report.times.solve_seconds);
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
