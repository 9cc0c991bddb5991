// CG and Jacobi-preconditioned CG through solve_system, on the CPU devices.
#include <doctest/doctest.h>
#include <omp.h>

#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCore>
#include <cmath>

#include "solver/solve.hpp"
#include "solver/validate.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

SolveRequest cpu_options(Format format = Format::csr, Device device = Device::omp) {
  SolveRequest o;
  o.backend.format = format;
  o.backend.device = device;
  o.cg.tol = 1e-10;
  return o;
}

double relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff += (a[i] - b[i]) * (a[i] - b[i]);
    norm += b[i] * b[i];
  }
  return std::sqrt(diff / norm);
}

// Eigen's CG with the identity preconditioner: the same algorithm, written independently.
long eigen_cg_iterations(const CsrMatrix<double>& A, const std::vector<double>& b, double tol) {
  std::vector<Eigen::Triplet<double>> entries;
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
      entries.emplace_back(r, A.col_idx[k], A.values[k]);
  Eigen::SparseMatrix<double> M(A.rows, A.cols);
  M.setFromTriplets(entries.begin(), entries.end());
  Eigen::ConjugateGradient<Eigen::SparseMatrix<double>, Eigen::Lower | Eigen::Upper,
                           Eigen::IdentityPreconditioner>
      cg;
  cg.setTolerance(tol);
  cg.compute(M);
  Eigen::VectorXd x = cg.solve(Eigen::Map<const Eigen::VectorXd>(b.data(), b.size()));
  return cg.iterations();
}

}  // namespace

TEST_CASE("CG recovers x* from b = A x* with every format, device, order and precision") {
  const CsrMatrix<double> A = random_spd(257, 4, 21);
  const std::vector<double> x_star = random_vector(257, 22);
  const std::vector<double> b = multiply(A, x_star);
  for (Format format : {Format::coo, Format::csr, Format::ell, Format::hll})
    for (Device device : {Device::serial, Device::omp})
      for (bool sorted : {false, true})
        for (Precision precision : {Precision::double_, Precision::single}) {
          CAPTURE(to_string(format));
          CAPTURE(to_string(device));
          CAPTURE(sorted);
          const bool single = precision == Precision::single;
          CAPTURE(single);
          SolveRequest o = cpu_options(format, device);
          o.sort_rows = sorted;
          o.precision = precision;
          o.cg.tol = single ? 1e-5 : 1e-12;
          std::vector<double> x;
          const SolveReport r = solve_system(A, b, x, o);
          CHECK(r.cg.status == CgStatus::converged);
          CHECK(r.cg.relative_residual() <= o.cg.tol);
          CHECK(r.true_relative_residual <= (single ? 1e-4 : 1e-11));
          CHECK(relative_difference(x, x_star) <= (single ? 1e-3 : 1e-9));
        }
}

TEST_CASE("the fused CPU loop takes the generic loop's steps") {
  // Same algorithm in two passes per iteration (on these sizes the OpenMP device runs it on one
  // thread; tests/solver/test_fused_cpu_cg.cpp forces the team): iterates agree up to rounding,
  // so the iteration counts agree within a few and the solutions to the tolerance.
  struct Case {
    const char* name;
    CsrMatrix<double> A;
    const char* M;
  };
  const Case cases[] = {{"random SPD", random_spd(1000, 5, 31), "none"},
                        {"random SPD, Jacobi", random_spd(1000, 5, 31), "jacobi"},
                        {"poisson 40x40", poisson2d(40), "none"},
                        {"n = 33", random_spd(33, 3, 32), "jacobi"}};
  for (const Case& c : cases)
    for (Format format : {Format::coo, Format::csr, Format::ell, Format::hll})
      for (int threads : {1, 2, 5}) {
        CAPTURE(c.name);
        CAPTURE(to_string(format));
        CAPTURE(threads);
        const std::vector<double> b = multiply(c.A, random_vector(c.A.rows, 33));
        SolveRequest o = cpu_options(format, Device::omp);
        o.precond = parse_precond(c.M);
        o.backend.threads = threads;
        o.cg.record_history = true;
        std::vector<double> x_fused, x_generic;
        o.cpu_loop = CpuLoopAsk::automatic;
        const SolveReport fused = solve_system(c.A, b, x_fused, o);
        o.cpu_loop = CpuLoopAsk::generic;
        const SolveReport generic = solve_system(c.A, b, x_generic, o);
        REQUIRE(fused.cg.status == CgStatus::converged);
        CHECK(std::abs(fused.cg.converged_at - generic.cg.converged_at) <= 2);
        CHECK(fused.cg.residual_history.size() == std::size_t(fused.cg.iterations) + 1);
        // Both time the SpMV inside the loop: the fused loops the pass that holds the product.
        CHECK(fused.spmv.measured);
        CHECK(fused.spmv.samples * fused.spmv.every >= fused.cg.iterations / 2);
        CHECK(generic.cg.spmv.samples.size() == std::size_t(generic.cg.iterations));
        CHECK(fused.true_relative_residual <= 1e-9);
        CHECK(relative_difference(x_fused, x_generic) <= 1e-8);
      }
}

TEST_CASE("2D Poisson converges in the iterations plain CG needs (Eigen's count, and the bound)") {
  const index_t m = 32;
  const CsrMatrix<double> A = poisson2d(m);
  const std::vector<double> b = multiply(A, std::vector<double>(m * m, 1.0));
  const double tol = 1e-8;
  SolveRequest o = cpu_options();
  o.cg.tol = tol;
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, o);
  REQUIRE(r.cg.status == CgStatus::converged);
  const long eigen = eigen_cg_iterations(A, b, tol);
  CHECK(std::abs(r.cg.converged_at - eigen) <= 2);
  // kappa = cot^2(pi h / 2) with h = 1/(m+1); CG needs at most sqrt(kappa)/2 ln(2/tol).
  const double kappa = std::pow(1.0 / std::tan(M_PI / (2.0 * (m + 1))), 2);
  CHECK(r.cg.converged_at <= std::ceil(0.5 * std::sqrt(kappa) * std::log(2.0 / tol)));
  CHECK(r.cg.converged_at >= 20);  // it is not trivially easy either
}

TEST_CASE("Jacobi cuts the iterations on a badly scaled SPD matrix") {
  // D A D with D spanning six orders of magnitude: same solution structure, awful scaling.
  CsrMatrix<double> A = poisson2d(12);
  std::vector<double> d(A.rows);
  for (index_t i = 0; i < A.rows; ++i) d[i] = std::pow(10.0, 3.0 * std::sin(0.7 * i));
  for (index_t r = 0; r < A.rows; ++r)
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) A.values[k] *= d[r] * d[A.col_idx[k]];
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  SolveRequest o = cpu_options();
  std::vector<double> x_plain, x_jacobi;
  o.cg.max_iters = 100000;
  const SolveReport plain = solve_system(A, b, x_plain, o);
  o.precond = parse_precond("jacobi");
  const SolveReport jacobi = solve_system(A, b, x_jacobi, o);
  REQUIRE(jacobi.cg.status == CgStatus::converged);
  CHECK(jacobi.cg.converged_at * 5 < plain.cg.iterations);
  CHECK(jacobi.true_relative_residual <= 1e-9);
}

TEST_CASE("an indefinite matrix ends in a breakdown, not a wrong answer") {
  for (bool fused : {true, false}) {
    CAPTURE(fused);
    CsrMatrix<double> A = poisson2d(5);
    for (index_t r = 0; r < A.rows; ++r)  // flip the sign of the diagonal in the lower half
      for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k)
        if (A.col_idx[k] == r && r >= 12) A.values[k] = -4.0;
    const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
    std::vector<double> x;
    SolveRequest o = cpu_options();
    o.cpu_loop = fused ? CpuLoopAsk::automatic : CpuLoopAsk::generic;
    const SolveReport r = solve_system(A, b, x, o);
    CHECK(r.cg.status == CgStatus::breakdown);
    CHECK_FALSE(r.cg.ok());
    CHECK(r.cg.iterations >= 1);
    for (double v : x) CHECK(std::isfinite(v));
  }
}

TEST_CASE("a NaN in the matrix is reported as such") {
  CsrMatrix<double> A = poisson2d(4);
  A.values[5] = std::nan("");
  for (bool fused : {true, false}) {
    std::vector<double> b(A.rows, 1.0), x;
    SolveRequest o = cpu_options();
    o.cpu_loop = fused ? CpuLoopAsk::automatic : CpuLoopAsk::generic;
    CHECK(solve_system(A, b, x, o).cg.status == CgStatus::non_finite);
  }
}

TEST_CASE("Jacobi refuses a non-positive diagonal: the matrix is not SPD") {
  CsrMatrix<double> A = poisson2d(3);
  A.values[0] = 0.0;  // A(1,1)
  std::vector<double> b(A.rows, 1.0), x;
  SolveRequest o = cpu_options();
  o.precond = parse_precond("jacobi");
  CHECK_THROWS_WITH_AS(solve_system(A, b, x, o), doctest::Contains("A(1,1) = 0"), InputError);
  // Rows on every core (n > 100,000): the first bad row is named, whichever thread found it.
  CsrMatrix<double> B = poisson2d(400);
  auto set_diagonal = [&B](index_t row, double value) {
    for (index_t k = B.row_ptr[row]; k < B.row_ptr[row + 1]; ++k)
      if (B.col_idx[k] == row) B.values[k] = value;
  };
  set_diagonal(150000, -1.0);
  set_diagonal(70000, -2.5);
  std::vector<double> c(B.rows, 1.0), y;
  const int default_threads = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    CHECK_THROWS_WITH_AS(solve_system(B, c, y, o), doctest::Contains("A(70001,70001) = -2.5"),
                         InputError);
  }
  omp_set_num_threads(default_threads);
}

TEST_CASE("b = 0 returns x = 0 at once, whatever x0 was") {
  const CsrMatrix<double> A = poisson2d(4);
  for (bool fused : {true, false}) {
    std::vector<double> b(A.rows, 0.0), x(A.rows, 5.0);
    SolveRequest o = cpu_options();
    o.cpu_loop = fused ? CpuLoopAsk::automatic : CpuLoopAsk::generic;
    const SolveReport r = solve_system(A, b, x, o);
    CHECK(r.cg.status == CgStatus::zero_rhs);
    CHECK(r.cg.iterations == 0);
    for (double v : x) CHECK(v == 0.0);
  }
}

TEST_CASE("the iteration limit ends the solve as not converged") {
  const CsrMatrix<double> A = poisson2d(20);
  const std::vector<double> b = multiply(A, std::vector<double>(A.rows, 1.0));
  for (bool fused : {true, false}) {
    SolveRequest o = cpu_options();
    o.cg.max_iters = 5;
    o.cpu_loop = fused ? CpuLoopAsk::automatic : CpuLoopAsk::generic;
    std::vector<double> x;
    const SolveReport r = solve_system(A, b, x, o);
    CHECK(r.cg.status == CgStatus::max_iterations);
    CHECK(r.cg.iterations == 5);
    CHECK(r.cg.relative_residual() > o.cg.tol);
  }
}

TEST_CASE("an initial guess, atol, history, timings and check_every") {
  const CsrMatrix<double> A = poisson2d(10);
  const std::vector<double> ones(A.rows, 1.0);
  const std::vector<double> b = multiply(A, ones);
  SolveRequest o = cpu_options();
  o.cg.record_history = true;

  SUBCASE("x0 = the answer: converged at iteration 0") {
    std::vector<double> x = ones;
    const SolveReport r = solve_system(A, b, x, o);
    CHECK(r.cg.converged_at == 0);
    CHECK(r.cg.residual_history.size() == 1);
  }
  SUBCASE("history has one entry per iteration plus the start, matching the end residual") {
    for (bool fused : {true, false}) {
      CAPTURE(fused);
      o.cpu_loop = fused ? CpuLoopAsk::automatic : CpuLoopAsk::generic;
      std::vector<double> x;
      const SolveReport r = solve_system(A, b, x, o);
      REQUIRE(r.cg.residual_history.size() == std::size_t(r.cg.iterations) + 1);
      CHECK(r.cg.residual_history.front() == doctest::Approx(norm2(b)));
      CHECK(r.cg.residual_history.back() == doctest::Approx(r.cg.residual_norm));
      CHECK(r.times.solve_seconds > 0);
      REQUIRE(r.spmv.measured);  // every loop times its SpMV
      if (!fused) CHECK(r.cg.spmv.samples.size() == std::size_t(r.cg.iterations));
      CHECK(r.spmv.min <= r.spmv.median);
      CHECK(r.spmv.median > 0);
      CHECK(r.spmv.total <= r.times.solve_seconds * 1.01);
    }
  }
  SUBCASE("reading every 7 iterations still reports the exact iteration") {
    std::vector<double> x1, x7;
    o.cpu_loop =
        CpuLoopAsk::generic;  // the fused loop has its scalars on the host: it checks every time
    const SolveReport every1 = solve_system(A, b, x1, o);
    o.cg.check_every = 7;
    const SolveReport every7 = solve_system(A, b, x7, o);
    CHECK(every7.cg.converged_at == every1.cg.converged_at);
    CHECK(every7.cg.iterations >= every7.cg.converged_at);
    CHECK(every7.cg.iterations - every7.cg.converged_at <= 6);
    CHECK(every7.cg.iterations % 7 == 0);
  }
  SUBCASE("atol stops earlier than a tight tol") {
    std::vector<double> x1, x2;
    o.cg.tol = 1e-14;
    const SolveReport tight = solve_system(A, b, x1, o);
    o.cg.atol = 1e-3;
    const SolveReport loose = solve_system(A, b, x2, o);
    CHECK(loose.cg.converged_at < tight.cg.converged_at);
    CHECK(loose.cg.residual_norm <= 1e-3);
  }
}

TEST_CASE("n = 1 and mismatched sizes") {
  const CsrMatrix<double> A{1, 1, {0, 1}, {0}, {4.0}};
  std::vector<double> b{2.0}, x;
  const SolveReport r = solve_system(A, b, x, cpu_options());
  CHECK(r.cg.status == CgStatus::converged);
  CHECK(x[0] == doctest::Approx(0.5));
  std::vector<double> short_b{1.0, 2.0};
  CHECK_THROWS_AS(solve_system(A, short_b, x, cpu_options()), InputError);
}
