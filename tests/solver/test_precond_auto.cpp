// --precond auto's Jacobi probe and fsai:2's cost check (solver/precond_probe.cpp, issue 21 item
// 4): Jacobi kept where it solves in its probe, not chosen where it fails, fsai:2 not set up
// where A^2 is dense (its pattern counted against a dense boolean product here), and no matrix
// refused that a candidate solves.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>
#include <limits>
#include <string>

#include "formats/generators.hpp"
#include "formats/matrix_market.hpp"
#include "solver/precond/cholesky.hpp"
#include "solver/precond/fsai.hpp"
#include "solver/precond_forecast.hpp"
#include "solver/precond_probe.hpp"
#include "solver/precond_test_util.hpp"
#include "solver/solve.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

SolveRequest serial_auto(double tol) { return auto_request(Device::serial, tol); }

std::string data(const std::string& file) {
  return std::string(CGSOLVE_SOURCE_DIR) + "/data/" + file;
}

// tril(A^2)'s entry count and longest row from dense boolean products (the reference for
// estimate_fsai_setup): column c <= i of row i is in the pattern when (|A| + |A|^2)(i, c) != 0.
struct DenseCount {
  double entries = 0, longest = 0, flops = 0;
};
DenseCount dense_tril_a2(const CsrMatrix<double>& A) {
  Eigen::MatrixXd B = Eigen::MatrixXd::Zero(A.rows, A.cols);
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) B(i, A.col_idx[k]) = 1;
  const Eigen::MatrixXd reach = B + B * B + Eigen::MatrixXd::Identity(A.rows, A.cols);
  DenseCount count;
  for (index_t i = 0; i < A.rows; ++i) {
    double m = 0;
    for (index_t c = 0; c <= i; ++c) m += reach(i, c) != 0;
    count.entries += m;
    count.longest = std::max(count.longest, m);
    count.flops += m * m * m / 6;
  }
  return count;
}

}  // namespace

TEST_CASE("--precond auto leaves a system of a few rows to Jacobi's probe, network or not") {
  // LFAT5: 14 rows, a network-like graph (mean degree <= 3), but at most 200 rows: Jacobi goes
  // first (CG ends within n steps in exact arithmetic) and solves it in its probe; chol, which
  // goes first on a network's larger graph, is not set up (H100: Jacobi 0.49 ms, chol 0.66,
  // auto with chol first 0.94; BENCHMARKS 10l).
  const CsrMatrix<double> A =
      read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) + "/data/matrices/LFAT5.mtx");
  const std::vector<double> b = multiply(A, std::vector<double>(std::size_t(A.rows), 1.0));
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, serial_auto(1e-10));
  const std::string& why = r.plan.inspection;
  INFO(why);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.name == "jacobi");
  CHECK(why.find("chol (not tried: ") != std::string::npos);
  CHECK(r.true_relative_residual <= 1e-8);
}

TEST_CASE("--precond auto keeps Jacobi where it solves the system in its probe, and says why") {
  // Strongly diagonally dominant (random_spd with a shifted diagonal, kappa ~ 1.5): Jacobi-CG
  // reaches 1e-10 in well under its 50-iteration probe, before any other candidate's set-up
  // (3,000 rows, and 1,013: not a multiple of 32). A random graph's factor fills in (not 2x
  // tril(A)'s), so Jacobi goes first.
  auto dominant = [](index_t n) {
    CsrMatrix<double> A = random_spd(n, 3, 21);
    for (index_t i = 0; i < A.rows; ++i)
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (A.col_idx[k] == i) A.values[k] += 20;
    return A;
  };
  for (const CsrMatrix<double>& M : {dominant(3000), dominant(1013)}) {
    const std::vector<double> x_true = random_vector(M.rows, 5);
    const std::vector<double> b = multiply(M, x_true);
    std::vector<double> x;
    const SolveReport r = solve_system(M, b, x, serial_auto(1e-10));
    REQUIRE(r.cg.ok());
    CHECK(r.plan.precond.name == "jacobi");
    const std::string& why = r.plan.inspection;
    CHECK(why.rfind("preconditioner jacobi: about", 0) == 0);
    CHECK(why.find("tried: jacobi (set-up ") != std::string::npos);
    CHECK(why.find(": solved)") != std::string::npos);
    CHECK(why.find("ic0 (not tried: jacobi's probe solved the system)") != std::string::npos);
    CHECK(why.find("probing 1 of 7 candidates (jacobi for 50 iterations") != std::string::npos);
    CHECK(r.probe_iterations > 0);
    CHECK(r.probe_iterations < 50);
    CHECK(r.cg.converged_at <= 1);  // the solve starts from the probe's converged x
    CHECK(r.true_relative_residual <= 1e-9);
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      err = std::max(err, std::abs(x[i] - x_true[i])), ref = std::max(ref, std::abs(x_true[i]));
    CHECK(err <= 1e-6 * ref);
  }
}

TEST_CASE("--precond auto does not choose Jacobi on an ill-conditioned EPANET system") {
  // Exnet step 3: Jacobi takes ~2,100 iterations to 1e-10, ic0 53, chol 1. Its factor is 1.4x
  // tril(A)'s (a network's near-tree graph), so chol is probed first, solves inside its probe,
  // and Jacobi is not even run (its residual falls fast at first, 1.9e10 -> 1e3 in 5 iterations,
  // then stalls).
  const CsrMatrix<double> A = read_matrix_market(data("systems/Exnet_EXN_step3.mtx.gz"));
  const std::vector<double> b = read_vector_market(data("systems/Exnet_EXN_step3_b.mtx.gz"));
  SolveRequest o = serial_auto(1e-10);
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, o);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.name != "jacobi");
  CHECK(r.true_relative_residual <= 1e-8);
  const std::string& why = r.plan.inspection;
  CHECK(r.plan.precond.name == "chol");
  CHECK(why.find("tried: chol (set-up ") != std::string::npos);
  CHECK(why.find("jacobi (not tried: chol's probe solved the system)") != std::string::npos);
  // The reference: Jacobi itself, asked for, needs over 10x the chosen one's iterations.
  o.precond = parse_precond("jacobi");
  std::vector<double> xj;
  const SolveReport jacobi = solve_system(A, b, xj, o);
  REQUIRE(jacobi.cg.ok());
  CHECK(jacobi.cg.converged_at > 1000);
  CHECK(r.cg.converged_at + r.probe_iterations < jacobi.cg.converged_at / 10);
}

TEST_CASE("fsai:2's set-up estimate counts tril(A^2) as a dense product does, sampled or not") {
  // Exactly counted: a grid, a random SPD matrix, an EPANET system, n = 1.
  for (const CsrMatrix<double>& A :
       {poisson2d(12), random_spd(300, 3, 4), read_matrix_market(data("matrices/494_bus.mtx")),
        poisson2d(1)}) {
    const FsaiSetupEstimate e = estimate_fsai_setup(A);
    const DenseCount ref = dense_tril_a2(A);
    CHECK_FALSE(e.sampled);
    CHECK(e.pattern_entries == ref.entries);
    CHECK(double(e.longest_row) == ref.longest);
    CHECK(e.factor_flops == doctest::Approx(ref.flops));
    double tril = 0;
    for (index_t i = 0; i < A.rows; ++i)
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) tril += A.col_idx[k] <= i;
    CHECK(e.tril_entries == tril);
    CHECK(e.pattern_entries >= e.tril_entries);
  }
  // A hub joined to every row: A^2 is dense, tril(A^2) the whole lower triangle. Counting every
  // row would cost ~n^2, so rows are sampled; the estimate stays within 25% of the dense count.
  const CsrMatrix<double> hub = hub_and_chain(800);
  const FsaiSetupEstimate e = estimate_fsai_setup(hub);
  const DenseCount ref = dense_tril_a2(hub);
  CHECK(e.sampled);
  CHECK(ref.entries == doctest::Approx(800.0 * 801 / 2));
  CHECK(e.pattern_entries == doctest::Approx(ref.entries).epsilon(0.25));
  CHECK(e.factor_flops == doctest::Approx(ref.flops).epsilon(0.25));
}

TEST_CASE("fsai:2 is not set up where A^2 is dense, and the reason says so") {
  // hub_and_chain(2000): tril(A^2) is dense (~2M entries, 3e11 flops of row factorizations, many
  // seconds); a 5-point grid of the same size stays a few times A.
  const std::string hub = fsai_setup_above(hub_and_chain(2000), 0.05);
  CHECK(hub.rfind("tril(A^2) has ", 0) == 0);
  CHECK(hub.find("(sampled)") != std::string::npos);
  CHECK(hub.find("of set-up") != std::string::npos);
  CHECK(fsai_setup_above(poisson2d(45), 0.05).empty());
  // bcsstk13 (rows of up to 331 entries in tril(A^2), 8e8 flops: 0.5-0.7 s measured) against a
  // 30 ms bound: refused; an EPANET system against 1 ms: set up.
  const std::string bcsstk13 =
      fsai_setup_above(read_matrix_market(data("matrices/bcsstk13.mtx")), 0.03);
  CHECK(bcsstk13.find("rows up to 331") != std::string::npos);
  CHECK(fsai_setup_above(read_matrix_market(data("systems/Exnet_EXN_step3.mtx.gz")), 1e-3).empty());
}

TEST_CASE("fsai:k's pattern is counted as a dense product counts it, for k = 1, 2 and 3") {
  // tril((I + |A|)^k)'s entries, row by row, from dense products: the reference for
  // count_fsai_pattern at every power the preconditioner takes below 4.
  for (const CsrMatrix<double>& A : {poisson2d(9), random_spd(200, 3, 7), hub_and_chain(60)}) {
    Eigen::MatrixXd B = Eigen::MatrixXd::Identity(A.rows, A.cols);
    for (index_t i = 0; i < A.rows; ++i)
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) B(i, A.col_idx[k]) = 1;
    Eigen::MatrixXd reach = Eigen::MatrixXd::Identity(A.rows, A.cols);
    for (int k = 1; k <= 3; ++k) {
      reach = (reach * B).cwiseMin(1.0);
      double entries = 0, longest = 0, flops = 0;
      for (index_t i = 0; i < A.rows; ++i) {
        double m = 0;
        for (index_t c = 0; c <= i; ++c) m += reach(i, c) != 0;
        entries += m, longest = std::max(longest, m), flops += m * m * m / 6;
      }
      const precond::FsaiPatternCount count = precond::count_fsai_pattern(A, k);
      CAPTURE(k);
      CHECK_FALSE(count.sampled);
      CHECK(count.power == k);
      CHECK(count.pattern_entries == entries);
      CHECK(double(count.longest_row) == longest);
      CHECK(count.factor_flops == doctest::Approx(flops));
    }
  }
}

TEST_CASE("fsai:k that cannot finish is refused before it is built, with its counts") {
  // gen:powerlaw:20000's hubs make tril(A^2) rows of thousands of entries: ~1e12 flops of row
  // factorizations (fsai:2 ran past 10 minutes on 2 cores before this count); fsai:1 there, and
  // fsai:2 on a grid and on bcsstk13 (8e8 flops, about a second), stay below the limit.
  const CsrMatrix<double> powerlaw = generate_matrix("gen:powerlaw:20000");
  const precond::FsaiPatternCount two = precond::count_fsai_pattern(powerlaw, 2, 2);
  CHECK(two.factor_flops > 10 * precond::kFsaiMaxFlops);
  const std::string why = precond::fsai_refusal(two);
  CHECK(why.rfind("fsai:2: tril(A^2) has ", 0) == 0);
  CHECK(why.find("(limit: 1e+10 flops") != std::string::npos);
  CHECK(precond::fsai_refusal(precond::count_fsai_pattern(powerlaw, 1, 2)).empty());
  CHECK(precond::fsai_refusal(precond::count_fsai_pattern(poisson2d(300), 2, 2)).empty());
  const CsrMatrix<double> bcsstk13 = read_matrix_market(data("matrices/bcsstk13.mtx"));
  CHECK(precond::fsai_refusal(precond::count_fsai_pattern(bcsstk13, 2, 2)).empty());
  // The preconditioner itself refuses, before its pattern is built: an InputError (exit 2)
  // naming the count, on the host and (the same count) on every device.
  const CsrMatrix<double> hub = hub_and_chain(3000);  // tril(A^2) dense: ~3e12 flops
  for (const Device device : {Device::serial, Device::omp}) {
    auto M = make_preconditioner<double>(parse_precond("fsai:2"), device, 2);
    try {
      M->analyze(hub);
      FAIL("fsai:2 was built on a dense tril(A^2)");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find("fsai:2: tril(A^2) has ") != std::string::npos);
      CHECK(std::string(e.what()).find("(sampled)") != std::string::npos);
    }
  }
  CHECK_NOTHROW(built("fsai:2", poisson2d(20)));
}

TEST_CASE("--precond auto never refuses a matrix that a candidate solves") {
  // Jacobi solving in its probe, Jacobi's residual not falling (Exnet's), a dense A^2 (the hub),
  // a real structural matrix, n = 1: each solved to its tolerance, by whichever candidate.
  std::vector<CsrMatrix<double>> matrices = {
      read_matrix_market(data("matrices/nos6.mtx")),
      read_matrix_market(data("matrices/494_bus.mtx")), hub_and_chain(500),
      read_matrix_market(data("matrices/gr_900_900_crg.mtx")), poisson2d(1)};
  for (const CsrMatrix<double>& A : matrices) {
    const std::vector<double> b = multiply(A, random_vector(A.rows, 8));
    std::vector<double> x;
    const SolveReport r = solve_system(A, b, x, serial_auto(1e-10));
    CAPTURE(A.rows);
    CAPTURE(r.plan.inspection);
    CHECK(r.cg.ok());
    CHECK(r.true_relative_residual <= 1e-8);
  }
}

TEST_CASE("Jacobi's rent: it runs on as long as the next candidate would cost at least") {
  // The numbers are the GPU's (H100, BENCHMARKS 10l): another candidate's least set-up 2 ms.
  const double least = 2e-3, inf = std::numeric_limits<double>::infinity();
  SUBCASE("nos6-like: residual not falling in the probe, chol cheap to set up") {
    // Jacobi's probe saw its residual rise (no forecast: infinite); chol's factor is estimated at
    // 0.1 ms. Jacobi still runs for the least set-up any candidate pays: on nos6 its 93
    // iterations take ~0.7 ms (7 us each).
    const JacobiRent rent = jacobi_rent("chol", least, 1e-4, 0.35e-3, inf, false);
    CHECK(rent.seconds == least);
    CHECK(rent.why == "another candidate's least set-up");
    CHECK(rent.seconds > 93 * 7e-6);
  }
  SUBCASE("bcsstk13-like: an untrusted forecast, chol's factor estimated at 200 ms") {
    // After 200 iterations (4.2 ms, 21 us each) a forecast of 1,800 more (truly 1,226, 26 ms):
    // inside a quarter of chol's 200 ms, which caps the rent (where chol wins, the rent is lost:
    // at most a quarter of its set-up). Jacobi's 1,226 left fit.
    const double per = 21e-6, ran = 200 * per;
    const JacobiRent rent = jacobi_rent("chol", least, 0.2, ran, 1800 * per, false);
    CHECK(rent.seconds == doctest::Approx(0.05));
    CHECK(rent.why == "0.25x chol's estimated set-up");
    CHECK(rent.seconds - ran >= 1226 * per);
    // A forecast of 5,296 more ends past that share: only the least set-up, nothing lost to it.
    const JacobiRent past = jacobi_rent("chol", least, 0.2, ran, 5296 * per, false);
    CHECK(past.seconds == least);
    CHECK(past.why == "another candidate's least set-up; its forecast ends past chol's share");
    // Forecast 242 after 50 (1.05 ms): believed up to 50 + 10 x 192 iterations (41 ms), below
    // a quarter of chol's set-up.
    const JacobiRent early = jacobi_rent("chol", least, 0.2, 50 * per, 192 * per, false);
    CHECK(early.seconds == doctest::Approx(1970 * per));
    CHECK(early.why == "10x its forecast");
    CHECK(early.seconds >= 1426 * per);
    // A trusted forecast is held against the whole set-up.
    CHECK(jacobi_rent("chol", least, 0.05, ran, 0.1, true).why == "chol's estimated set-up");
    // A trusted forecast is believed twice (a restart can cost the iterations already run).
    const JacobiRent trusted = jacobi_rent("fsai:2", least, 0.05, 0.004, 0.003, true);
    CHECK(trusted.seconds == doctest::Approx(0.010));
    CHECK(trusted.why == "2x its forecast");
  }
  SUBCASE("hopeless Jacobi (Exnet-like): a cheap candidate still comes after the least set-up") {
    // 30 iterations forecast 57 on Exnet step 3, which takes 2,121 (16 us each on the GPU): the
    // candidate's estimated set-up (0.2 ms) is below the least, so Jacobi's runs stop at 2 ms in
    // all, a fifteenth of the 34 ms it needs, and the candidate is set up.
    const double per = 16e-6;
    const JacobiRent rent = jacobi_rent("chol", least, 2e-4, 30 * per, 27 * per, false);
    CHECK(rent.seconds == least);
    CHECK(rent.seconds < 2121 * per / 10);
    // No estimate (cheb:8, ic0): the least set-up, whatever Jacobi forecasts.
    CHECK(jacobi_rent("cheb:8", least, 0, 0.001, 1.0, false).seconds == least);
    // An untrusted rent never passes a quarter of the candidate's own set-up where that is above
    // the least (AMG's estimated 16 ms: 4 ms).
    CHECK(jacobi_rent("amg", least, 0.016, 0.001, 0.002, false).seconds == doctest::Approx(0.004));
    CHECK(jacobi_rent("amg", least, 0.004, 0.001, inf, false).seconds == least);
  }
}

TEST_CASE("--precond auto runs Jacobi on before chol's set-up, and keeps it where that solves") {
  // A power-law graph's Laplacian + 0.1 I (3,000 rows): Jacobi needs ~58 iterations to 1e-10,
  // just past its 50-iteration probe, whose forecast is trusted; chol's factor (9x tril(A)'s,
  // 0.023 Gflop: ~23 ms estimated) costs ten times Jacobi's whole solve. So Jacobi runs on before
  // chol's set-up, up to twice its forecast (in iterations, whatever this machine's timings:
  // the rent's time over Jacobi's own time an iteration), solves, and nothing else is set up.
  const CsrMatrix<double> A = generate_matrix("gen:powerlaw:3000");
  const std::vector<double> b = multiply(A, random_vector(A.rows, 12));
  SolveRequest o = serial_auto(1e-10);
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, o);
  const std::string& why = r.plan.inspection;
  INFO(why);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.name == "jacobi");
  CHECK(why.find("of them run on in ") != std::string::npos);
  // (amg comes before chol on this graph: its set-up estimated below a quarter of chol's.)
  CHECK((why.find("before amg's set-up (up to ") != std::string::npos ||
         why.find("before chol's set-up (up to ") != std::string::npos));
  // (Its rent's reason: twice its forecast, or the least set-up where a stall made Jacobi's own
  // set-up, which every candidate pays too, longer.)
  const bool forecast = why.find("2x its forecast): solved)") != std::string::npos;
  const bool least = why.find("another candidate's least set-up): solved)") != std::string::npos;
  CHECK((forecast || least));
  CHECK(why.find("chol (not tried: jacobi's probe solved the system)") != std::string::npos);
  CHECK(why.find("amg (not tried: jacobi's probe solved the system)") != std::string::npos);
  CHECK(r.cg.converged_at <= 1);
  CHECK(r.true_relative_residual <= 1e-9);
  // The reference: Jacobi asked for needs more than the probe's 50, and the probe's runs (CG
  // restarted at 50) not many more than it.
  o.precond = parse_precond("jacobi");
  std::vector<double> xj;
  const SolveReport jacobi = solve_system(A, b, xj, o);
  REQUIRE(jacobi.cg.ok());
  CHECK(jacobi.cg.converged_at > 50);
  CHECK(r.probe_iterations >= jacobi.cg.converged_at - 2);
  CHECK(r.probe_iterations <= jacobi.cg.converged_at + 50);
  // The probe's kept runs are the solve's, not a loser's probing: the report says how long.
  CHECK(r.times.probe_kept_seconds > 0);
  CHECK(r.times.probe_kept_seconds <= r.times.inspect_seconds);
}

TEST_CASE("--precond auto still switches where Jacobi is hopeless, after at most its rent") {
  // A 40x40 grid whose conductances span eight decades: Jacobi needs 3,267 iterations (~30 ms
  // here); chol's factor (5x tril(A)'s, 0.58 Mflop) is forecast at a few ms, below 4x AMG's
  // estimated set-up, so it comes before AMG; Jacobi's runs stop at a quarter of that forecast
  // (or at the least set-up) and chol is set up, and solves in its probe.
  const CsrMatrix<double> A = weighted_grid(40, 4, 11);
  const std::vector<double> b = multiply(A, random_vector(A.rows, 13));
  SolveRequest o = serial_auto(1e-10);
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, o);
  const std::string& why = r.plan.inspection;
  INFO(why);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.name == "chol");
  CHECK(why.find("tried: jacobi (set-up ") != std::string::npos);
  CHECK(why.find("x its forecast") == std::string::npos);  // no rent past the least set-up
  CHECK(r.true_relative_residual <= 1e-9);
  o.precond = parse_precond("jacobi");
  std::vector<double> xj;
  const SolveReport jacobi = solve_system(A, b, xj, o);
  CHECK(jacobi.cg.converged_at > 1000);
  CHECK(r.cg.converged_at + r.probe_iterations <= 5);
}

// ---- the forecasts made before a set-up (solver/precond_forecast.hpp), on counted quantities
// and injected rates: no timing ----

namespace {

// Rates chosen for the test (not a device's): every forecast below is then a function of the
// counts alone.
ProbeRates test_rates(double per_level) {
  ProbeRates r;
  r.measured_on = "test";
  r.least_setup = 0;
  r.amg_setup_per_entry = 4e-7;
  r.cholesky_per_flop = 1e-9;
  r.cholesky_per_entry = 1e-7;
  r.solve_per_entry = 1e-9;
  r.per_level = per_level;
  r.jacobi_per_entry = 1e-9;
  r.per_iteration = 1e-6;
  return r;
}

// The level count of L's triangular solves from L's own pattern (Eigen's factor in its AMD
// order): row i waits for every column j < i with L(i, j) != 0. The reference for the count's
// elimination-tree height.
double factor_levels(const CsrMatrix<double>& A) {
  Eigen::SparseMatrix<double, Eigen::ColMajor, index_t> M(A.rows, A.cols);
  std::vector<Eigen::Triplet<double, index_t>> entries;
  for (index_t i = 0; i < A.rows; ++i)
    for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      entries.emplace_back(i, A.col_idx[k], A.values[k]);
  M.setFromTriplets(entries.begin(), entries.end());
  Eigen::SimplicialLLT<decltype(M), Eigen::Lower, Eigen::AMDOrdering<index_t>> llt(M);
  REQUIRE(llt.info() == Eigen::Success);
  const auto L = llt.matrixL().toDense();  // small matrices only
  std::vector<double> level(std::size_t(A.rows), 0);
  double most = 0;
  for (index_t i = 0; i < A.rows; ++i) {
    for (index_t j = 0; j < i; ++j)
      if (L(i, j) != 0) level[std::size_t(i)] = std::max(level[std::size_t(i)], level[std::size_t(j)] + 1);
    most = std::max(most, level[std::size_t(i)] + 1);
  }
  return most;
}

}  // namespace

TEST_CASE("chol's count gives its solves' levels: the elimination tree's height") {
  for (const CsrMatrix<double>& A :
       {poisson2d(20), generate_matrix("gen:waternet:900:3:2:6"), random_spd(300, 3, 5),
        read_matrix_market(data("matrices/494_bus.mtx"))}) {
    const precond::CholeskyEstimate e = precond::estimate_cholesky(A);
    CAPTURE(A.rows);
    CHECK(e.levels == factor_levels(A));
    CHECK(e.levels >= 1);
    CHECK(e.levels <= A.rows);
  }
}

TEST_CASE("AMG's set-up is forecast from A's entries at the device's rate, and said so") {
  const ProbeRates rates = test_rates(0);
  const CsrMatrix<double> A = poisson2d(100);
  const AmgSetupEstimate e = estimate_amg_setup(A, rates);
  CHECK(e.rows == 10000);
  CHECK(e.entries == double(A.nnz()));
  CHECK(e.seconds == doctest::Approx(double(A.nnz()) * 4e-7));
  const std::string why = describe(e, rates);
  CHECK(why.find(std::to_string(A.nnz()) + " entries x 4e-07 s (the test's rate)") !=
        std::string::npos);
  // The rates as a loaded machine runs them: Jacobi's probe 3x its forecast scales every rate.
  double factor = 0;
  const ProbeRates loaded =
      calibrated(rates, 3 * (double(A.nnz()) * 1e-9 + 1e-6), double(A.nnz()), factor);
  CHECK(factor == doctest::Approx(3));
  CHECK(estimate_amg_setup(A, loaded).seconds == doctest::Approx(3 * e.seconds));
  calibrated(rates, 1e3, double(A.nnz()), factor);
  CHECK(factor == 20);  // bounded
  // The host's and the GPU's rates differ where the devices do (the GPU's AMG set-up runs there).
  CHECK(probe_rates(Device::gpu, 1, 1000, 5000).amg_setup_per_entry <
        probe_rates(Device::serial, 1, 1000, 5000).amg_setup_per_entry);
  CHECK(probe_rates(Device::serial, 1, 1000000, 5e6).per_level == 0);  // one thread: no waits
  CHECK(probe_rates(Device::omp, 2, 1000000, 5e6).per_level > 0);      // a team at barriers
}

TEST_CASE("The network rule: chol first only where its factor and levels forecast a win") {
  // Exnet step 3 (a network's graph, factor 1.4x tril(A)'s, 60 levels) and a tree with few loops
  // and conductances over six decades (gen:waternet:30000:1:2:6): with no wait per level chol's
  // forecast is far below Jacobi's 2,000 iterations at the least on both; at a wait of 1 ms a
  // level (a device that synchronises per level, slowly) the tree's two solves an apply cost
  // more than that, and Jacobi goes first.
  const CsrMatrix<double> exnet = read_matrix_market(data("systems/Exnet_EXN_step3.mtx.gz"));
  const CsrMatrix<double> tree = generate_matrix("gen:waternet:30000:1:2:6");
  for (const CsrMatrix<double>* A : {&exnet, &tree}) {
    CHECK(network_graph(*A, 200));
    const precond::CholeskyEstimate e = precond::estimate_cholesky(*A);
    const NetworkRule fast = network_rule(e, *A, test_rates(0));
    CHECK(fast.chol_first);
    CHECK(fast.why.find("levels a solve") != std::string::npos);
    CHECK(fast.why.find(": chol first") != std::string::npos);
    const CholeskyForecast f = forecast_cholesky(e, double(A->nnz()), test_rates(1e-3));
    CHECK(f.apply == doctest::Approx(2 * (e.factor_entries * 1e-9 + e.levels * 1e-3)));
    const NetworkRule slow = network_rule(e, *A, test_rates(1e-3));
    const double jacobi = 2000 * (double(A->nnz()) * 1e-9 + 1e-6);
    CHECK(slow.chol_first == (f.seconds < jacobi));
    if (A == &tree) {
      CHECK_FALSE(slow.chol_first);
      CHECK(slow.why.find("above Jacobi's 2000 iterations at the least") != std::string::npos);
      CHECK(slow.why.find(": Jacobi first") != std::string::npos);
    }
  }
  CHECK_FALSE(network_graph(poisson2d(100), 200));  // a grid: 4 off-diagonal entries a row
  CHECK_FALSE(network_graph(read_matrix_market(data("matrices/LFAT5.mtx")), 200));  // 14 rows
}

TEST_CASE("--precond auto keeps Jacobi where it forecasts less than AMG's set-up, and stops") {
  // A 30^3 grid, random b, tol 1e-10: Jacobi needs 88 iterations, past its probe and a rent of
  // a quarter of AMG's estimated set-up (which, calibrated by Jacobi's own time an iteration,
  // is ~270 Jacobi iterations whatever this machine's speed); its forecast then leaves a few
  // dozen, less than AMG's set-up: AMG is not built, and on a mesh nothing else is probed.
  const CsrMatrix<double> A = generate_matrix("gen:poisson3d:30");
  const std::vector<double> b = multiply(A, random_vector(A.rows, 41));
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, serial_auto(1e-10));
  const std::string& why = r.plan.inspection;
  INFO(why);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.name == "jacobi");
  CHECK(why.find("amg (not tried: its estimated set-up, 183600 entries x ") != std::string::npos);
  CHECK(why.find("above jacobi's remaining") != std::string::npos);
  CHECK(why.find("ic0 (not tried: jacobi has about ") != std::string::npos);
  CHECK(why.find("less than amg's estimated set-up: probing another cannot pay") !=
        std::string::npos);
  CHECK(why.find("probing 1 of 7 candidates") != std::string::npos);
  CHECK(r.true_relative_residual <= 1e-9);
}

TEST_CASE("--precond auto drops a first candidate whose forecast loses to Jacobi's") {
  const double inf = std::numeric_limits<double>::infinity();
  // AMG on a structural matrix: 20 iterations forecast 3,660 more at 2 ms (7.3 s); Jacobi's
  // forecast 1,350 more at 0.3 ms (0.4 s), believed up to 10x as the best's bound (4 s): dropped,
  // and the reason names Jacobi's forecast.
  const std::string elastic = dropped_first_candidate(3660 * 2e-3, 1350 * 3e-4, 10 * 1350 * 3e-4);
  CHECK(elastic.rfind("its forecast, 7.32e+03 ms left, loses to jacobi's forecast 405 ms", 0) == 0);
  // AMG on a grid: 2 more V-cycles (0.1 s) against Jacobi's 1,650 more iterations (33 s): on.
  CHECK(dropped_first_candidate(2 * 0.05, 1650 * 0.02, 10 * 1650 * 0.02).empty());
  // Jacobi without a forecast (its residual not falling): only the bound can drop it.
  CHECK(dropped_first_candidate(5.0, inf, inf).empty());
  CHECK(dropped_first_candidate(5.0, inf, 1.0) == "its forecast, 5e+03 ms left, loses to the best's 1e+03 ms");
  // An early forecast counts four times (AMG on bcsstk13 on the GPU was kept on its 20
  // iterations' forecast, under a quarter of Jacobi's 89 ms left, then needed 146 ms).
  CHECK(dropped_first_candidate(0.030, 0.094, inf).empty());
  CHECK(dropped_first_candidate(0.030, 0.094, inf, 4) ==
        "its forecast, 30 ms left (counted 4x: read from its first runs), loses to jacobi's "
        "forecast 94 ms");
}

TEST_CASE("--precond auto drops AMG that does not work (elasticity without its near-nullspace)") {
  // AMG's 20-iteration forecast above 50 iterations, against a Jacobi forecast past its horizon:
  // dropped, with the reason; a trusted Jacobi forecast, or none, or AMG working: not this rule.
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(amg_not_working(63, 2.46, false).rfind("its forecast, 63 iterations, is AMG not working", 0) == 0);
  CHECK(amg_not_working(63, 2.46, true).empty());
  CHECK(amg_not_working(63, inf, false).empty());
  CHECK(amg_not_working(12, 2.46, false).empty());
  // gen:elasticity3d:12 (6,084 rows), serial: Jacobi needs 125 iterations but forecasts 2,457 from
  // its first 50 (past its horizon); plain AMG needs 68 at ~4x Jacobi's time an iteration and
  // auto took it (3x Jacobi's time); chol's factor of the 3-D mesh then cost 10x Jacobi's solve.
  // Now AMG is dropped after its first 20 and Jacobi solves, nothing else probed.
  const CsrMatrix<double> A = generate_matrix("gen:elasticity3d:12");
  // (b = A 1, cgsolve's default: a random b gives Jacobi a forecast of 288 that AMG's estimated
  // set-up alone loses to, and AMG is not built.)
  const std::vector<double> b = multiply(A, std::vector<double>(std::size_t(A.rows), 1.0));
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, serial_auto(1e-8));
  const std::string& why = r.plan.inspection;
  INFO(why);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.name == "jacobi");
  if (why.find("amg (set-up ") != std::string::npos) {  // built (timings decide): dropped
    CHECK(why.find("is AMG not working on this matrix") != std::string::npos);
    CHECK(why.find("chol (not tried: amg does not work on this matrix") != std::string::npos);
  }
  CHECK(r.true_relative_residual <= 1e-8);
}
