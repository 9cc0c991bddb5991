// --precond auto on the GPU (solver/precond_probe.cpp, issue 21 item 4): Jacobi's short probe
// kept on a small well-conditioned matrix (the data/matrices case, where auto paid a stronger
// candidate's set-up first: 1.66-20x Jacobi's time on an H100), fsai:2 not set up on bcsstk13
// (0.5 s of set-up against Jacobi's 28 ms solve), Jacobi kept running where it is the best
// candidate (ski rental) and not where it is hopeless, and each solved to its tolerance.
#include <string>

#include "formats/matrix_market.hpp"
#include "gpu_test_util.hpp"
#include "solver/precond_test_util.hpp"
#include "solver/solve.hpp"

namespace cgs {
namespace {

SolveRequest gpu_auto(double tol) { return testing::auto_request(Device::gpu, tol); }

std::vector<double> ones_times(const CsrMatrix<double>& A) {
  return multiply(A, std::vector<double>(std::size_t(A.rows), 1.0));
}

TEST_CASE("GPU --precond auto keeps Jacobi where its probe solves the system") {
  CGS_REQUIRE_GPU_OR_SKIP();
  // Strongly diagonally dominant random matrices (5,000 and 1,013 rows): their factors fill in,
  // so Jacobi goes first, and solves inside its probe.
  auto dominant = [](index_t n) {
    CsrMatrix<double> A = testing::random_spd(n, 3, 21);
    for (index_t i = 0; i < A.rows; ++i)
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (A.col_idx[k] == i) A.values[k] += 20;
    return A;
  };
  for (const CsrMatrix<double>& A : {dominant(5000), dominant(1013)}) {
    const std::vector<double> b = ones_times(A);
    std::vector<double> x;
    const SolveReport r = solve_system(A, b, x, gpu_auto(1e-10));
    const std::string& why = r.plan.inspection;
    INFO(why);
    REQUIRE(r.cg.ok());
    CHECK(r.plan.precond.name == "jacobi");
    CHECK(why.find("fsai:2 (not tried: jacobi's probe solved the system)") != std::string::npos);
    CHECK(r.true_relative_residual <= 1e-9);
  }
}

TEST_CASE("GPU --precond auto does not set up fsai:2 on bcsstk13, whose A^2 is dense") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> A =
      read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) + "/data/matrices/bcsstk13.mtx");
  const std::vector<double> b = ones_times(A);
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, gpu_auto(1e-10));
  const std::string& why = r.plan.inspection;
  INFO(why);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.text() != "fsai:2");
  // Not set up: chol (6x tril(A)'s entries, 0.05 Gflop) solves it first, or the count of
  // tril(A^2) rules fsai:2 out.
  CHECK(why.find("fsai:2 (not tried: ") != std::string::npos);
  CHECK(r.true_relative_residual <= 1e-8);
}

// Ski rental (jacobi_rent): where Jacobi is the best fixed candidate (nos6 93 iterations,
// bcsstk13 1,426; H100: Jacobi 1.57 / 31 ms, auto 6.40 / 76 ms before, BENCHMARKS 10l), Jacobi
// runs on from its probe's x before another candidate's set-up. nos6: its 200-iteration probe
// solves it, so nothing else is set up and the solve starts solved. bcsstk13: the rent runs
// Jacobi on for up to chol's estimated set-up (51 ms); whether its ~1,500 iterations end inside
// that depends on the device's time per iteration (cgsolve on an H100: 18-21 us, inside; this
// test process: up to 35 us, just outside, then chol is set up), so only the rent is asserted.
TEST_CASE("GPU --precond auto keeps Jacobi running on nos6; bcsstk13 by the plan's candidate") {
  CGS_REQUIRE_GPU_OR_SKIP();
  auto solve_auto = [](const char* name, const CsrMatrix<double>& A) {
    CAPTURE(name);
    const std::vector<double> b = ones_times(A);
    std::vector<double> x;
    const SolveReport r = solve_system(A, b, x, gpu_auto(1e-10));
    INFO(r.plan.inspection);
    REQUIRE(r.cg.ok());
    CHECK(r.true_relative_residual <= 1e-8);
    return r;
  };
  auto read = [](const char* name) {
    return read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) + "/data/matrices/" + name + ".mtx");
  };
  {
    const CsrMatrix<double> A = read("nos6");
    const SolveReport r = solve_auto("nos6", A);
    const std::string& why = r.plan.inspection;
    INFO(why);
    CHECK(r.plan.precond.name == "jacobi");
    for (const char* other : {"amg", "chol", "fsai:2", "cheb:8", "ic0", "bjacobi:64"})
      CHECK(why.find(std::string(other) + " (not tried: ") != std::string::npos);
    CHECK(why.find("probing 1 of 7 candidates (jacobi for 200 iterations") != std::string::npos);
    CHECK(r.cg.converged_at <= 1);  // it starts from the probe's converged x
    // The reference: Jacobi asked for. The probe's run takes at most its 200 iterations more.
    SolveRequest fixed = gpu_auto(1e-10);
    fixed.precond = parse_precond("jacobi");
    std::vector<double> xj;
    const SolveReport jacobi = solve_system(A, ones_times(A), xj, fixed);
    REQUIRE(jacobi.cg.ok());
    CHECK(r.probe_iterations >= jacobi.cg.converged_at - 5);
    CHECK(r.probe_iterations <= jacobi.cg.converged_at + 200);
    CHECK(r.times.probe_kept_seconds > 0);
    CHECK(r.times.probe_kept_seconds <= r.times.inspect_seconds);
  }
  {
    const SolveReport r = solve_auto("bcsstk13", read("bcsstk13"));
    const std::string& why = r.plan.inspection;
    INFO(why);
    // Either the rent ran Jacobi on before chol's set-up and Jacobi or chol solves, or AMG, set
    // up first (its estimated set-up is small on the GPU), is kept on its first 20 iterations'
    // forecast (under a quarter of Jacobi's, though it needs ~550 iterations) and solves inside
    // its probe: 153 ms against Jacobi's ~90 ms on the H200, a case issue 50's target misses
    // (BENCHMARKS §27). Which one ran must be the one the plan names, and it must solve.
    const bool rent = why.find("run on in ") != std::string::npos &&
                      (why.find("before amg's set-up") != std::string::npos ||
                       why.find("before chol's set-up") != std::string::npos);
    // Or AMG, set up and probed, forecast above 50 iterations beside a doubtful Jacobi forecast:
    // not working on this matrix (an elasticity-like one), dropped, and Jacobi solves.
    const bool dropped = why.find("is AMG not working on this matrix") != std::string::npos;
    if (r.plan.precond.name == "amg") {
      CHECK(why.find("amg (set-up ") != std::string::npos);
      CHECK(why.find("(not tried: amg's probe solved the system)") != std::string::npos);
    } else if (dropped) {
      CHECK(r.plan.precond.name == "jacobi");
      CHECK(why.find("amg (set-up ") != std::string::npos);
    } else {
      CHECK(rent);
      CHECK((r.plan.precond.name == "jacobi" || r.plan.precond.name == "chol"));
    }
    for (const char* other : {"fsai:2", "cheb:8", "ic0", "bjacobi:64"})
      CHECK(why.find(std::string(other) + " (not tried: ") != std::string::npos);
  }
}

// Where Jacobi is hopeless the others still come: a grid whose conductances span eight decades
// (4,669 Jacobi iterations from b = A 1) has a small factor (0.58 Mflop, below the GPU's least
// set-up of 2 ms), so after Jacobi's 200-iteration probe, run on to that least set-up, chol is
// set up and solves. On an EPANET system (a network's graph) chol goes first and Jacobi never runs.
TEST_CASE("GPU --precond auto still sets up chol where Jacobi is hopeless") {
  CGS_REQUIRE_GPU_OR_SKIP();
  const CsrMatrix<double> grid = testing::weighted_grid(40, 4, 11);
  std::vector<double> x;
  const SolveReport r = solve_system(grid, ones_times(grid), x, gpu_auto(1e-10));
  INFO(r.plan.inspection);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.name == "chol");
  CHECK(r.plan.inspection.find("tried: jacobi (set-up ") != std::string::npos);
  CHECK(r.true_relative_residual <= 1e-8);

  const std::string dir = std::string(CGSOLVE_SOURCE_DIR) + "/data/systems/";
  const CsrMatrix<double> exnet = read_matrix_market(dir + "Exnet_EXN_step3.mtx.gz");
  const std::vector<double> b = read_vector_market(dir + "Exnet_EXN_step3_b.mtx.gz");
  std::vector<double> xe;
  const SolveReport e = solve_system(exnet, b, xe, gpu_auto(1e-10));
  INFO(e.plan.inspection);
  REQUIRE(e.cg.ok());
  CHECK(e.plan.precond.name == "chol");
  CHECK(e.plan.inspection.find("jacobi (not tried: chol's probe solved the system)") !=
        std::string::npos);
  CHECK(e.true_relative_residual <= 1e-8);
}

}  // namespace
}  // namespace cgs
