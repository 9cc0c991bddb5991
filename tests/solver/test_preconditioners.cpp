// The preconditioners behind the seam (ic0, fsai, bjacobi, cheb, amg, chol): each apply against a
// dense reference computed here independently (Eigen), the preconditioned operator symmetric and
// positive definite, set_values taking new numbers, and each solving to Jacobi-CG's answer in
// every CPU loop with fewer iterations.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <cmath>
#include <regex>

#include "formats/generators.hpp"
#include "formats/matrix_market.hpp"
#include "solver/precond/preconditioner.hpp"
#include "solver/precond/sparse_cholesky.hpp"
#include "solver/precond_test_util.hpp"
#include "solver/solve.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;

namespace {

double relative(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  return (a - b).norm() / b.norm();
}

// A tridiagonal SPD matrix: its Cholesky factor has no fill, so IC(0) is exact.
CsrMatrix<double> tridiagonal(index_t n) {
  std::vector<index_t> r, c;
  std::vector<double> v;
  for (index_t i = 0; i < n; ++i) {
    r.push_back(i), c.push_back(i), v.push_back(2.5 + 0.1 * (i % 7));
    if (i + 1 < n) {
      r.insert(r.end(), {i, i + 1}), c.insert(c.end(), {i + 1, i});
      v.insert(v.end(), {-1.0 - 0.002 * (i % 5), -1.0 - 0.002 * (i % 5)});
    }
  }
  return csr_from_triplets(n, n, r, c, v);
}

// FSAI's G on the pattern of tril(A), written out directly from the definition.
Eigen::MatrixXd fsai_reference(const Eigen::MatrixXd& A) {
  const Eigen::Index n = A.rows();
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    std::vector<Eigen::Index> P;
    for (Eigen::Index j = 0; j <= i; ++j)
      if (A(i, j) != 0) P.push_back(j);
    Eigen::MatrixXd local(P.size(), P.size());
    for (std::size_t a = 0; a < P.size(); ++a)
      for (std::size_t b = 0; b < P.size(); ++b) local(a, b) = A(P[a], P[b]);
    Eigen::VectorXd e = Eigen::VectorXd::Zero(Eigen::Index(P.size()));
    e(Eigen::Index(P.size()) - 1) = 1;
    const Eigen::VectorXd y = local.llt().solve(e);
    for (std::size_t a = 0; a < P.size(); ++a)
      G(i, P[a]) = y(Eigen::Index(a)) / std::sqrt(y(y.size() - 1));
  }
  return G;
}

double chebyshev_t(int d, double x) {  // T_d(x) for any real x
  double t0 = 1, t1 = x;
  if (d == 0) return t0;
  for (int k = 1; k < d; ++k) {
    const double t2 = 2 * x * t1 - t0;
    t0 = t1;
    t1 = t2;
  }
  return t1;
}

std::string fact(const Preconditioner<double>& M, const std::string& key) {
  for (const auto& [k, v] : M.report().facts)
    if (k == key) return v;
  return "";
}

// The largest |(L L^T)_ij - A_ij| / ||A|| over A's pattern: 0 to rounding for IC(0) in any
// elimination order (its defining property).
double worst_off_pattern(const Eigen::MatrixXd& LLt, const Eigen::MatrixXd& D) {
  double worst = 0;
  for (Eigen::Index i = 0; i < D.rows(); ++i)
    for (Eigen::Index j = 0; j < D.cols(); ++j)
      if (D(i, j) != 0) worst = std::max(worst, std::abs(LLt(i, j) - D(i, j)) / D.norm());
  return worst;
}

}  // namespace

TEST_CASE("ic0 is exact where Cholesky makes no fill, and matches A on A's pattern elsewhere") {
  for (index_t n : {1, 2, 33, 64}) {
    CAPTURE(n);
    const CsrMatrix<double> T = tridiagonal(n);
    auto M = built("ic0", T);
    CHECK(relative(inverse_of(*M, n), dense(T).inverse()) < 1e-12);
    CHECK(fact(*M, "diagonal shift") == "none");
  }
  // In general (L L^T)_ij = A_ij wherever A_ij != 0 (the defining property of IC(0)).
  for (unsigned seed : {3u, 4u}) {
    const CsrMatrix<double> A = random_spd(60, 4, seed);
    auto M = built("ic0", A);
    const Eigen::MatrixXd LLt = inverse_of(*M, A.rows).inverse();
    const Eigen::MatrixXd D = dense(A);
    CHECK(worst_off_pattern(LLt, D) < 1e-12);
    CHECK(relative(LLt, D) > 1e-6);  // and it is not A^-1's inverse: fill was dropped
  }
}

TEST_CASE("chol: M^-1 is A^-1 in any row order; CG stops at once; too much fill is refused") {
  for (index_t n : {1, 2, 33, 70}) {
    for (unsigned seed : {8u, 9u}) {
      CAPTURE(n);
      CAPTURE(seed);
      const CsrMatrix<double> A = random_spd(n, 4, seed);
      for (auto [device, threads] : {std::pair{Device::serial, 1}, std::pair{Device::omp, 2}}) {
        auto M = built("chol", A, device, threads);
        CHECK(relative(inverse_of(*M, n), dense(A).inverse()) < 1e-12);
      }
    }
  }
  // An EPANET system (coefficients 1e-6..1e6 apart): one step to 1e-10, where ic0 takes 53.
  const CsrMatrix<double> exnet =
      read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) + "/data/systems/Exnet_EXN_step3.mtx.gz");
  const std::vector<double> b = multiply(exnet, random_vector(exnet.rows, 31));
  SolveRequest o;
  o.backend.format = Format::csr;
  o.backend.device = Device::serial;
  o.cg.tol = 1e-10;
  o.precond = parse_precond("chol");
  std::vector<double> x;
  const SolveReport r = solve_system(exnet, b, x, o);
  REQUIRE(r.cg.ok());
  CHECK(r.cg.converged_at <= 2);
  CHECK(r.true_relative_residual <= 1e-9);
  auto M = built("chol", exnet);
  CHECK(fact(*M, "order") == "approximate minimum degree (Eigen)");
  CHECK(fact(*M, "factor").find("x tril(A)'s") != std::string::npos);
  // A 3-D grid fills in: 5.6M entries, 53x tril(A)'s, 4.9 Gflop at 30^3. Refused (from the
  // analysis alone) above maxfill, and above the flop limit whatever maxfill says; a small
  // factor is allowed whatever its ratio (the 40x40 grid's is 8x).
  const CsrMatrix<double> cube = generate_matrix("gen:poisson3d:30");
  CHECK_THROWS_WITH_AS(built("chol", cube), doctest::Contains("maxfill"), InputError);
  CHECK_THROWS_WITH_AS(built("chol:maxfill=1000", cube), doctest::Contains("Gflop"), InputError);
  CHECK_NOTHROW(built("chol:maxfill=1", poisson2d(40)));
  // A million-row graph with hubs (its longest row 18,349 entries) crashed Eigen's AMD ordering:
  // refused before the ordering, with the hub named.
  const CsrMatrix<double> hubs = generate_matrix("gen:powerlaw:1000000");
  CHECK_THROWS_WITH_AS(built("chol", hubs), doctest::Contains("with hubs (a row of 18349 entries"),
                       InputError);
  // Not positive definite: a clear error, not a wrong preconditioner.
  CsrMatrix<double> indefinite = tridiagonal(5);
  indefinite.values[0] = -1;
  CHECK_THROWS_WITH_AS(built("chol", indefinite), doctest::Contains("not positive definite"),
                       InputError);
}

// chol in a fixed order: the left-looking factorisation (EPANET's order of operations) and its
// substitutions, run as the program's level operations on any device and thread count, give
// SparseCholesky's own solve (the direct solver's, EPANET's) to the last bit.
TEST_CASE("chol:order=given|natural: M^-1 b is the left-looking factor's solve bit for bit") {
  const CsrMatrix<double> exnet =
      read_matrix_market(std::string(CGSOLVE_SOURCE_DIR) + "/data/systems/Exnet_EXN_step3.mtx.gz");
  for (const CsrMatrix<double>* A : {&exnet}) {
    const index_t n = A->rows;
    const std::vector<int> amd = precond::minimum_degree_order(*A);
    std::vector<int> natural(static_cast<std::size_t>(n));
    for (index_t i = 0; i < n; ++i) natural[std::size_t(i)] = int(i);
    for (const bool given : {true, false}) {
      CAPTURE(given);
      const std::vector<int>& order = given ? amd : natural;
      precond::SparseCholesky reference;
      reference.analyse(*A, order);
      REQUIRE(reference.factorize(*A, nullptr));
      const std::vector<double> b = random_vector(std::size_t(n), 41);
      std::vector<double> expected;
      reference.solve(b, expected);
      PrecondSpec spec = parse_precond(given ? "chol:order=given" : "chol:order=natural");
      spec.elimination_order = std::make_shared<const std::vector<int>>(amd);
      for (const auto& team : {std::pair{Device::serial, 1}, std::pair{Device::omp, 2}}) {
        const int threads = team.second;  // a plain variable: clang 14 cannot CAPTURE a binding
        CAPTURE(threads);
        auto M = make_preconditioner<double>(spec, team.first, threads);
        M->analyze(*A);
        std::vector<double> z(b.size());
        M->apply(b.data(), z.data());
        CHECK(z == expected);  // bit for bit
        // New values of the same pattern (a Newton trial): gathered into the same slots.
        CsrMatrix<double> B = *A;
        for (double& v : B.values) v *= 3;
        M->set_values(B);
        reference.factorize(B, nullptr);
        reference.solve(b, expected);
        M->apply(b.data(), z.data());
        CHECK(z == expected);
        reference.factorize(*A, nullptr);
        reference.solve(b, expected);
      }
    }
  }
  // The order's owner is the caller: a missing or wrong one is a clear error.
  CHECK_THROWS_WITH_AS(built("chol:order=given", exnet), doctest::Contains("needs an elimination"),
                       InputError);
  PrecondSpec short_order = parse_precond("chol:order=given");
  short_order.elimination_order = std::make_shared<const std::vector<int>>(std::vector<int>{0, 1});
  CHECK_THROWS_WITH_AS(make_preconditioner<double>(short_order, Device::serial, 1)->analyze(exnet),
                       doctest::Contains("rows"), InputError);
  PrecondSpec repeated = parse_precond("chol:order=given");
  std::vector<int> twice(static_cast<std::size_t>(exnet.rows), 0);
  repeated.elimination_order = std::make_shared<const std::vector<int>>(twice);
  CHECK_THROWS_WITH_AS(make_preconditioner<double>(repeated, Device::serial, 1)->analyze(exnet),
                       doctest::Contains("not a permutation"), InputError);
}

// A pivot <= 0 in the fixed order (a matrix singular to rounding there): the smallest diagonal
// shift that goes through, reported, and CG still solves the system it can.
TEST_CASE("chol:order=natural: a pivot <= 0 is passed with a small diagonal shift") {
  // [[1, 1], [1, 1 + 2^-60]]: the second pivot (1 + 2^-60) - 1 rounds to 0 in this order.
  CsrMatrix<double> A;
  A.rows = A.cols = 3;
  A.row_ptr = {0, 2, 4, 5};
  A.col_idx = {0, 1, 0, 1, 2};
  A.values = {1, 1, 1, 1 + std::ldexp(1.0, -60), 2};
  auto M = built("chol:order=natural", A);
  CHECK(fact(*M, "shifted").find("1 factorisation(s)") != std::string::npos);
  const Eigen::MatrixXd Minv = inverse_of(*M, A.rows);
  CHECK(std::isfinite(Minv.norm()));
  CHECK(Minv(2, 2) == doctest::Approx(0.5));  // the row the shift leaves alone is exact
  // Indefinite whatever the shift: still the clear error.
  CsrMatrix<double> indefinite = tridiagonal(5);
  indefinite.values[0] = -1;
  CHECK_THROWS_WITH_AS(built("chol:order=natural", indefinite),
                       doctest::Contains("not positive definite"), InputError);
}

TEST_CASE("ic0:colour: IC(0) in a colour-by-colour elimination order, one level per colour") {
  // (L L^T)_ij = A_ij on A's pattern holds in any elimination order.
  for (unsigned seed : {5u, 6u}) {
    const CsrMatrix<double> A = random_spd(70, 4, seed);
    auto M = built("ic0:colour", A, Device::omp, 2);
    const Eigen::MatrixXd LLt = inverse_of(*M, A.rows).inverse();
    const Eigen::MatrixXd D = dense(A);
    CHECK(worst_off_pattern(LLt, D) < 1e-12);
    const int colours = std::stoi(fact(*M, "colours"));
    CHECK(colours >= 2);
    CHECK(M->program_size() <= 2 * colours);
    // The same factor whether a team runs it level by level or one thread in one sweep.
    CHECK(relative(inverse_of(*built("ic0:colour", A), A.rows), inverse_of(*M, A.rows)) < 1e-13);
  }
  // A 5-point grid is red-black: two colours, 2 + 2 operations per apply.
  auto M = built("ic0:colour", poisson2d(20), Device::omp, 2);
  CHECK(fact(*M, "colours") == "2");
  CHECK(fact(*M, "levels") == "2 + 2");
  CHECK(M->program_size() == 4);
  // The exact order on the same grid: a level per anti-diagonal.
  CHECK(built("ic0:levels", poisson2d(20), Device::omp, 2)->program_size() == 2 * 39);
  // The default order is the exact one (on the GPU too: tests/gpu).
  CHECK(built("ic0", poisson2d(4))->name() == "ic0:levels");
}

TEST_CASE("ic0:parts: interiors of row parts first, separators last, still IC(0)") {
  const CsrMatrix<double> A = poisson2d(12);  // 144 rows, parts of 24 = two grid rows each
  auto M = built("ic0:parts:24", A, Device::omp, 2);
  CHECK(M->name() == "ic0:parts:24");
  // A part's last grid row touches the next part: 12 separators in each of the first 5 parts.
  CHECK(fact(*M, "parts") == "6 of 24 rows, 60 separator rows last");
  CHECK(worst_off_pattern(inverse_of(*M, A.rows).inverse(), dense(A)) < 1e-12);
  CHECK(M->program_size() < built("ic0:levels", A, Device::omp, 2)->program_size());
  CHECK_THROWS_AS(built("ic0:parts:1", A), InputError);
  CHECK_THROWS_AS(built("ic0:parts:x", A), InputError);
}

TEST_CASE("fsai:1 applies G^T G with G from the definition, a full pattern gives A^-1") {
  const CsrMatrix<double> A = random_spd(40, 3, 7);
  const Eigen::MatrixXd G = fsai_reference(dense(A));
  auto M = built("fsai", A);
  CHECK(relative(inverse_of(*M, A.rows), G.transpose() * G) < 1e-12);
  // tril(A^k) is the whole lower triangle once k reaches the graph's diameter (a path of 5).
  const CsrMatrix<double> T = tridiagonal(5);
  CHECK(relative(inverse_of(*built("fsai:4", T), 5), dense(T).inverse()) < 1e-12);
  CHECK(relative(inverse_of(*built("fsai:2", T), 5), dense(T).inverse()) > 1e-6);
}

TEST_CASE("bjacobi inverts each diagonal block exactly, the last one shorter") {
  const CsrMatrix<double> A = random_spd(37, 4, 11);  // 37 = 9 blocks of 4 and one of 1
  const Eigen::MatrixXd D = dense(A);
  Eigen::MatrixXd expected = Eigen::MatrixXd::Zero(37, 37);
  for (index_t first = 0; first < 37; first += 4) {
    const index_t m = std::min<index_t>(4, 37 - first);
    expected.block(first, first, m, m) = D.block(first, first, m, m).inverse();
  }
  CHECK(relative(inverse_of(*built("bjacobi:4", A), 37), expected) < 1e-12);
  CHECK(relative(inverse_of(*built("bjacobi:64", A), 37), D.inverse()) < 1e-12);
}

TEST_CASE("cheb:d is (I - P_d(D^-1 A)) A^-1 with P_d the scaled Chebyshev polynomial") {
  const CsrMatrix<double> A = random_spd(50, 4, 13);
  const Eigen::MatrixXd D = dense(A);
  const Eigen::VectorXd s = D.diagonal().cwiseSqrt().cwiseInverse();
  const Eigen::MatrixXd S = s.asDiagonal() * D * s.asDiagonal();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(S);
  for (int degree : {1, 2, 5}) {
    CAPTURE(degree);
    auto M = built("cheb:" + std::to_string(degree), A);
    std::smatch m;
    const std::string interval = fact(*M, "interval");
    REQUIRE(std::regex_search(interval, m, std::regex(R"(\[([^,]+), ([^\]]+)\])")));
    const double a = std::stod(m[1]), b = std::stod(m[2]);
    CHECK(b >= eig.eigenvalues().maxCoeff());  // p stays positive on the whole spectrum
    const double theta = (a + b) / 2, delta = (b - a) / 2;
    Eigen::VectorXd q(eig.eigenvalues().size());
    for (Eigen::Index i = 0; i < q.size(); ++i) {
      const double l = eig.eigenvalues()(i);
      q(i) =
          (1 - chebyshev_t(degree, (theta - l) / delta) / chebyshev_t(degree, theta / delta)) / l;
    }
    const Eigen::MatrixXd expected = s.asDiagonal() * eig.eigenvectors() * q.asDiagonal() *
                                     eig.eigenvectors().transpose() * s.asDiagonal();
    CHECK(relative(inverse_of(*M, A.rows), expected) < 1e-10);
  }
}

TEST_CASE("every preconditioner's M^-1 is symmetric positive definite, from n = 1 up") {
  for (const char* name : {"ic0", "ic0:colour", "fsai", "fsai:2", "bjacobi:4", "cheb:3", "cheb:6",
                           "amg", "amg:coarse=8", "chol"})
    for (index_t n : {1, 7, 33, 70}) {
      CAPTURE(std::string(name));
      CAPTURE(n);
      const CsrMatrix<double> A = random_spd(n, 4, unsigned(n));
      auto M = built(name, A, Device::omp, 2);
      const Eigen::MatrixXd Minv = inverse_of(*M, n);
      CHECK((Minv - Minv.transpose()).norm() <= 1e-12 * Minv.norm());
      const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig((Minv + Minv.transpose()) / 2);
      CHECK(eig.eigenvalues().minCoeff() > 0);
    }
}

TEST_CASE("jacobi: d = 1 / diag(A), duplicate diagonal entries summed, on every core") {
  for (index_t n : {1, 33, 100001, 250007}) {
    CAPTURE(n);
    // A diagonal matrix whose row i holds its diagonal as two entries (i % 3 + 1 and 0.5) around
    // an off-diagonal one: d_i = 1 / (i % 3 + 1.5).
    CsrMatrix<double> A;
    A.rows = A.cols = n;
    A.row_ptr.assign(1, 0);
    for (index_t i = 0; i < n; ++i) {
      A.col_idx.push_back(i), A.values.push_back(double(i % 3) + 1);
      if (n > 1) A.col_idx.push_back((i + 1) % n), A.values.push_back(-1e-3);
      A.col_idx.push_back(i), A.values.push_back(0.5);
      A.row_ptr.push_back(index_t(A.col_idx.size()));
    }
    for (int threads : {1, 2}) {
      CAPTURE(threads);
      auto M = make_preconditioner<double>(parse_precond("jacobi"), Device::omp, threads);
      M->analyze(A);
      REQUIRE(M->pointwise());
      REQUIRE(M->diagonal() != nullptr);
      index_t wrong = 0;
      for (index_t i = 0; i < n; ++i) wrong += M->diagonal()[i] != 1.0 / (double(i % 3) + 1.5);
      CHECK(wrong == 0);
    }
    auto F = make_preconditioner<float>(parse_precond("jacobi"), Device::omp, 2);
    F->analyze(A);
    CHECK(F->diagonal()[n - 1] == float(1.0 / (double((n - 1) % 3) + 1.5)));
  }
}

TEST_CASE("set_values: new numbers on the same pattern give the preconditioner of the new A") {
  CsrMatrix<double> A = random_spd(45, 4, 17);
  for (const char* name :
       {"ic0", "ic0:colour", "fsai:2", "bjacobi:8", "cheb:4", "amg:coarse=8,theta=0", "chol"}) {
    CAPTURE(std::string(name));
    auto M = built(name, A);
    CsrMatrix<double> B = A;
    for (index_t i = 0; i < B.rows; ++i)  // a different SPD matrix, same pattern
      for (index_t k = B.row_ptr[i]; k < B.row_ptr[i + 1]; ++k)
        B.values[k] *= B.col_idx[k] == i ? 3.0 + 0.05 * (i % 5) : 0.5;
    M->set_values(B);
    CHECK(relative(inverse_of(*M, B.rows), inverse_of(*built(name, B), B.rows)) < 1e-14);
  }
}

TEST_CASE("preconditioner arguments: integers in range, or a clear error") {
  for (const char* bad : {"fsai:x", "fsai:0", "fsai:9", "bjacobi:0", "cheb:", "cheb:2.5", "ic0:1",
                          "ic0:red", "chol:4", "chol:maxfill=0", "chol:maxfill=x", "chol:fill=3",
                          "chol:order=rcm", "chol:order=amd,", "chol:maxfill=2,order"}) {
    CAPTURE(std::string(bad));
    CHECK_THROWS_AS(make_preconditioner<double>(parse_precond(bad), Device::serial, 1), InputError);
  }
  CHECK_THROWS_AS(parse_precond("ilu"), InputError);
}

TEST_CASE("each preconditioner solves to Jacobi-CG's answer in every CPU loop, in fewer steps") {
  struct Case {
    const char* name;
    CsrMatrix<double> A;
  };
  const Case cases[] = {{"poisson 30x30", poisson2d(30)},
                        {"random SPD 500", random_spd(500, 5, 23)}};
  for (const Case& c : cases) {
    const std::vector<double> b = multiply(c.A, random_vector(c.A.rows, 29));
    SolveRequest o;
    o.backend.format = Format::csr;
    o.backend.device = Device::omp;
    o.backend.threads = 2;
    o.cg.tol = 1e-10;
    o.precond = parse_precond("jacobi");
    std::vector<double> x_jacobi;
    const SolveReport jacobi = solve_system(c.A, b, x_jacobi, o);
    REQUIRE(jacobi.cg.ok());
    for (const char* name :
         {"ic0", "ic0:colour", "fsai", "fsai:2", "bjacobi:64", "cheb:4", "amg", "chol"}) {
      long iterations = -1;
      for (CpuLoopAsk loop : {CpuLoopAsk::generic, CpuLoopAsk::serial, CpuLoopAsk::team}) {
        CAPTURE(std::string(c.name));
        CAPTURE(std::string(name));
        CAPTURE(int(loop));
        o.precond = parse_precond(name);
        o.cpu_loop = loop;
        std::vector<double> x;
        const SolveReport r = solve_system(c.A, b, x, o);
        REQUIRE(r.cg.ok());
        CHECK(r.true_relative_residual <= 1e-9);
        double diff = 0, norm = 0;
        for (std::size_t i = 0; i < x.size(); ++i) {
          diff = std::max(diff, std::abs(x[i] - x_jacobi[i]));
          norm = std::max(norm, std::abs(x_jacobi[i]));
        }
        CHECK(diff <= 1e-8 * norm);
        // Poisson is what they are for; on the diagonally dominant random matrix (21 Jacobi
        // steps) block-Jacobi gains nothing, but none may lose.
        if (c.A.rows == 900)
          CHECK(r.cg.converged_at < jacobi.cg.converged_at);
        else
          CHECK(r.cg.converged_at <= jacobi.cg.converged_at);
        // One algorithm in every loop: the same iteration count, up to rounding.
        if (iterations < 0) iterations = r.cg.converged_at;
        CHECK(std::abs(r.cg.converged_at - iterations) <= 1);
        CHECK(r.spmv.measured);
      }
    }
  }
}

SolveRequest serial_auto_request(double tol) { return auto_request(Device::serial, tol); }

TEST_CASE("--precond auto says what it chose, what it tried and why, and solves") {
  const CsrMatrix<double> A = poisson2d(40);
  const std::vector<double> b = multiply(A, random_vector(A.rows, 31));
  SolveRequest o = serial_auto_request(1e-10);
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, o);
  REQUIRE(r.cg.ok());
  CHECK(r.true_relative_residual <= 1e-9);
  const std::string& why = r.plan.inspection;
  CHECK(why.rfind("preconditioner " + r.plan.precond.text() + ": about", 0) == 0);
  for (const char* name : {"jacobi", "amg", "chol", "ic0", "fsai:2", "cheb:8", "bjacobi:64"})
    CHECK(why.find(name) != std::string::npos);
  CHECK(why.find(" of 7 candidates") != std::string::npos);
  CHECK(why.find("on the solve's right-hand side") != std::string::npos);
  CHECK(r.times.inspect_seconds > 0);
  // The solve went on from the winner's probe: its iterations are counted there, not repeated.
  CHECK(r.probe_iterations > 0);
  CHECK(why.find("kept as the solve's start") != std::string::npos);
  // Which one wins depends on this machine's timings; whichever it is needs no more
  // iterations than Jacobi (every candidate cuts Poisson's count) - Jacobi itself, where its
  // probe and rent (solver/precond_probe.hpp, jacobi_rent) solve it, no more than twice one
  // unbroken run (each run on restarts CG from its x, which can cost the iterations before).
  o.precond = parse_precond("jacobi");
  std::vector<double> xj;
  const SolveReport jacobi = solve_system(A, b, xj, o);
  const long restarts = r.plan.precond.name == "jacobi" ? jacobi.cg.converged_at : 0;
  CHECK(r.cg.converged_at + r.probe_iterations <= jacobi.cg.converged_at + restarts);
}

TEST_CASE("--precond auto sets AMG up first on a large grid, and its probe is the solve") {
  // Poisson 450x450 (202,500 rows: past the rows where auto counts chol's factor): Jacobi's
  // forecast after its probe (~350 iterations, truly more) ends past a quarter of AMG's estimated
  // set-up (~270 Jacobi iterations at the host's rates), so Jacobi is not run on, and AMG, the
  // first strong candidate on a mesh, is set up; it needs ~12 iterations to 1e-12, inside its probe
  // (run by time, 60 s here so that a loaded machine cannot cut it), so nothing else is tried.
  const CsrMatrix<double> A = poisson2d(450);
  const std::vector<double> b = multiply(A, random_vector(A.rows, 34));
  SolveRequest o = serial_auto_request(1e-12);
  o.auto_first_probe_seconds = 60;
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, o);
  const std::string& why = r.plan.inspection;
  INFO(why);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.name == "amg");
  CHECK(r.probe_iterations >= 5);
  CHECK(r.cg.converged_at <= 2);
  CHECK(why.find("a forecast past its horizon), amg (set-up ") != std::string::npos);
  CHECK(why.find("chol (not tried: amg's probe solved the system") != std::string::npos);
  CHECK(why.find("ic0 (not tried: amg's probe solved the system") != std::string::npos);
  CHECK(why.find("the host's rates x ") != std::string::npos);
  // Jacobi asked for needs far more than the probe and its rent ran.
  SolveRequest j = o;
  j.precond = parse_precond("jacobi");
  j.cg.max_iters = 400;
  std::vector<double> xj;
  CHECK_FALSE(solve_system(A, b, xj, j).cg.ok());
}

TEST_CASE("--precond auto stops probing once its first candidate's probe solved the system") {
  // Jacobi's 50-iteration probe and its rent (up to a quarter of chol's forecast, a few ms) do
  // not solve a 40x40 grid whose conductances span eight decades (3,268 Jacobi iterations;
  // Poisson's ~100 could finish inside the rent); chol, the first strong candidate (its factor
  // 5x tril(A)'s, its forecast below 4x AMG's estimated set-up), does in 1-2 iterations, inside
  // its probe: nothing else can beat a solved system, so nothing else is set up (AMG neither),
  // and the solve starts converged.
  const CsrMatrix<double> A = weighted_grid(40, 4, 11);
  const std::vector<double> b = multiply(A, random_vector(A.rows, 33));
  SolveRequest o = serial_auto_request(1e-10);
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, o);
  const std::string& why = r.plan.inspection;
  INFO(why);
  REQUIRE(r.cg.ok());
  CHECK(r.plan.precond.name == "chol");
  CHECK(r.true_relative_residual <= 1e-9);
  CHECK(why.find("probing 2 of 7 candidates") != std::string::npos);
  CHECK(why.find("tried: jacobi (set-up ") != std::string::npos);
  CHECK(why.find("ic0 (not tried: chol's probe solved the system") != std::string::npos);
  CHECK(why.find("amg (not tried: chol's probe solved the system") != std::string::npos);
  CHECK(r.cg.converged_at == 0);  // it starts from the probe's converged x
  CHECK(r.probe_iterations >= 1);
  // A caller's own initial guess is kept: no warm start then, the solve iterates from it.
  std::vector<double> x0(std::size_t(A.rows), 1.0);
  const SolveReport own = solve_system(A, b, x0, o);
  CHECK(own.probe_iterations == 0);
  CHECK(own.cg.converged_at >= 1);
}
