// AMG with a near-nullspace (issue 52, robustness): `amg:nullspace=FILE`, `coords=`, `block=`
// (solver/precond/amg_nullspace.hpp) and the elasticity generator (formats/elasticity.hpp).
// Errors name the file, the line and the problem; the rigid-body modes are the kernel of the
// unclamped stiffness matrix; the tentative P reproduces the near-nullspace (T B_coarse = B,
// T's columns orthonormal); with the modes CG takes far fewer iterations than without on 2-D and
// 3-D elasticity, and its solution is the direct solver's.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <Eigen/SparseCholesky>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "formats/elasticity.hpp"
#include "formats/generators.hpp"
#include "solver/precond/amg_aggregate.hpp"
#include "solver/precond/amg_nullspace.hpp"
#include "solver/precond/amg_setup.hpp"
#include "solver/precond_test_util.hpp"
#include "solver/solve.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;
namespace amg = cgs::precond::amg;

namespace {

// A file of `text` in a fresh temporary folder, removed with the object.
struct TempFile {
  std::filesystem::path path;
  TempFile(const std::string& name, const std::string& text) {
    path = std::filesystem::temp_directory_path() /
           ("cgsolve-nullspace-" + std::to_string(::getpid()) + "-" + name);
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
  std::string str() const { return path.string(); }
};

// The InputError that analysing `spec` on A throws (REQUIREd).
InputError error_of(const std::string& spec, const CsrMatrix<double>& A) {
  try {
    built(spec, A);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error from " << spec);
  return InputError("");
}

bool has(const InputError& e, const std::string& part) {
  return std::string(e.what()).find(part) != std::string::npos;
}

// B's column c as a vector.
std::vector<double> column(const amg::NearNullspace& ns, int c) {
  const auto n = std::size_t(ns.rows());
  return {ns.B.begin() + std::ptrdiff_t(std::size_t(c) * n),
          ns.B.begin() + std::ptrdiff_t(std::size_t(c + 1) * n)};
}

double norm(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

int iterations(const CsrMatrix<double>& A, const std::vector<double>& b, const std::string& pc,
               std::vector<double>* solution = nullptr) {
  SolveRequest request;
  request.backend.format = Format::csr;
  request.backend.device = Device::omp;
  request.backend.threads = 2;
  request.cg.tol = 1e-8;
  request.cg.max_iters = 5000;
  request.precond = parse_precond(pc);
  std::vector<double> x;
  const SolveReport r = solve_system(A, b, x, request);
  REQUIRE(r.cg.ok());
  CHECK(r.true_relative_residual <= 1e-8);
  if (solution) *solution = x;
  return r.cg.converged_at;
}

}  // namespace

TEST_CASE("elasticity: symmetric positive definite when clamped; the rigid-body modes its kernel") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const ElasticityProblem clamped = elasticity_problem(dim, dim == 2 ? 6 : 3);
    CHECK(clamped.A.rows == dim * (dim == 2 ? 6 * 7 : 3 * 16));  // the x = 0 face left out
    const Eigen::MatrixXd K = dense(clamped.A);
    CHECK((K - K.transpose()).norm() <= 1e-14 * K.norm());
    CHECK(Eigen::LLT<Eigen::MatrixXd>(K).info() == Eigen::Success);
    // Unclamped: K B = 0 for the 3 (6) modes, and no other null vector (rank n - modes).
    const ElasticityProblem free = elasticity_problem(dim, dim == 2 ? 6 : 3, false);
    const amg::NearNullspace modes = amg::rigid_body_modes(free.coords, dim);
    CHECK(modes.cols == (dim == 2 ? 3 : 6));
    for (int c = 0; c < modes.cols; ++c) {
      CAPTURE(c);
      const std::vector<double> b = column(modes, c);
      CHECK(norm(multiply(free.A, b)) <= 1e-12 * norm(b) * dense(free.A).norm());
    }
    const Eigen::VectorXd l =
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(dense(free.A)).eigenvalues();
    CHECK(std::abs(l(modes.cols - 1)) <= 1e-12 * l(l.size() - 1));
    CHECK(l(modes.cols) >= 1e-6 * l(l.size() - 1));
  }
  CHECK(generate_matrix("gen:elasticity3d:2").rows == 3 * 2 * 9);
  CHECK_THROWS_AS(generate_matrix("gen:elasticity2d:0"), InputError);
  CHECK_THROWS_AS(generate_matrix("gen:elasticity3d:x"), InputError);
  CHECK_THROWS_AS(generate_matrix("gen:elasticity2d:3:4"), InputError);
}

TEST_CASE("amg nullspace: T B_coarse = B, T's columns orthonormal, on every level") {
  for (int dim : {2, 3}) {
    CAPTURE(dim);
    const ElasticityProblem p = elasticity_problem(dim, dim == 2 ? 24 : 8);
    amg::HierarchyOptions o;
    o.coarse = 20;
    o.nullspace =
        std::make_shared<const amg::NearNullspace>(amg::rigid_body_modes(p.coords, dim));
    const amg::Hierarchy h = amg::build_hierarchy(p.A, o);
    REQUIRE(h.levels.size() >= 3);
    for (std::size_t l = 0; h.has_next(l); ++l) {
      CAPTURE(l);
      const amg::NearNullspace& fine = *h.levels[l].nullspace;
      const amg::NearNullspace& coarse = *h.levels[l + 1].nullspace;
      const CsrMatrix<double>& T = h.levels[l].tentative;
      REQUIRE(T.cols == coarse.rows());
      REQUIRE(h.op(p.A, l + 1).rows == coarse.rows());
      const Eigen::MatrixXd Td = dense(T);
      const Eigen::MatrixXd B = Eigen::Map<const Eigen::MatrixXd>(fine.B.data(), fine.rows(), fine.cols);
      const Eigen::MatrixXd Bc =
          Eigen::Map<const Eigen::MatrixXd>(coarse.B.data(), coarse.rows(), coarse.cols);
      CHECK((Td * Bc - B).norm() <= 1e-12 * B.norm());
      CHECK((Td.transpose() * Td - Eigen::MatrixXd::Identity(T.cols, T.cols)).norm() <= 1e-12 * T.cols);
      // Each aggregate keeps all modes it holds: the coarse rows of one node are 3 (6) but where
      // the node had fewer rows, as a lone fine node has.
      for (index_t node = 0; node < coarse.nodes; ++node) {
        index_t rows = 0;
        for (index_t r : coarse.node_of) rows += r == node;
        CHECK(rows <= coarse.cols);
      }
      // The smoothed P's coarse space still holds the modes where A has no Dirichlet rows: the
      // Galerkin operator is A restricted, so it is SPD.
      CHECK(Eigen::LLT<Eigen::MatrixXd>(dense(h.op(p.A, l + 1))).info() == Eigen::Success);
    }
  }
  // One lone 3-D node: the 6 modes have rank 3 there (the rotations are its translations').
  amg::NearNullspace one = amg::rigid_body_modes({0.5, 0.25, 1, 0, 0, 0}, 3);
  amg::Aggregates two;
  two.of = {0, 0, 0, 1, 1, 1};
  two.count = 2;
  const amg::Tentative t = amg::tentative_prolongator(two, one);
  CHECK(t.T.cols == 6);  // 3 + 3: each node its 3 translations
  amg::Aggregates both;
  both.of = {0, 0, 0, 0, 0, 0};
  both.count = 1;
  CHECK(amg::tentative_prolongator(both, one).T.cols == 5);  // two nodes: 5 (no spin on their axis)
}

TEST_CASE("amg nullspace: errors name the file, the line and the problem") {
  const CsrMatrix<double> A = generate_matrix("gen:poisson2d:2");  // 4 rows
  const std::string banner = "%%MatrixMarket matrix array real general\n";
  const TempFile rows3("rows3.mtx", banner + "3 1\n1\n1\n1\n");
  InputError e = error_of("amg:nullspace=" + rows3.str(), A);
  CHECK(e.file() == rows3.str());
  CHECK(e.line() == 2);
  CHECK(has(e, "3 rows but the matrix has 4"));
  const TempFile nan("nan.mtx", banner + "4 1\n1\n1\nnan\n1\n");
  e = error_of("amg:nullspace=" + nan.str(), A);
  CHECK(e.file() == nan.str());
  CHECK(e.line() == 5);
  CHECK(has(e, "NaN"));
  const TempFile same("same.mtx", banner + "4 2\n1\n2\n3\n4\n2\n4\n6\n8\n");
  e = error_of("amg:nullspace=" + same.str(), A);
  CHECK(e.file() == same.str());
  CHECK(has(e, "linearly dependent"));
  const TempFile zero("zero.mtx", banner + "4 2\n1\n2\n3\n4\n0\n0\n0\n0\n");
  CHECK(has(error_of("amg:nullspace=" + zero.str(), A), "column 2 is zero"));
  const TempFile wide("wide.mtx", banner + "1 4\n1\n2\n3\n4\n");
  e = error_of("amg:coords=" + wide.str(), A);
  CHECK(e.line() == 2);
  CHECK(has(e, "x 2 or n_nodes x 3"));
  const TempFile xy("xy.mtx", banner + "3 2\n0\n1\n2\n0\n0\n0\n");  // 3 nodes: 6 rows, not 4
  e = error_of("amg:coords=" + xy.str(), A);
  CHECK(e.line() == 2);
  CHECK(has(e, "3 nodes of 2 dofs are 6 rows but the matrix has 4"));
  const TempFile xy2("xy2.mtx", banner + "2 2\n0\n1\n0\n0\n");
  CHECK(has(error_of("amg:coords=" + xy2.str() + ",block=3", A), "block=3"));
  CHECK(has(error_of("amg:coords=" + xy2.str() + ",nullspace=" + same.str(), A), "exclude"));
  CHECK(has(error_of("amg:block=3", A), "does not divide the matrix's 4 rows"));
  CHECK(has(error_of("amg:coords=gen:elasticity2d:3", A), "24 rows but the matrix has 4"));
  CHECK(has(error_of("amg:nullspace=/no/such/file.mtx", A), "/no/such/file.mtx"));
  CHECK_THROWS_AS(built("amg:coords=" + xy2.str() + ",aggregation=device", A), InputError);
  CHECK_THROWS_AS(built("amg:block=2,aggregation=blocks", A), InputError);
  CHECK_THROWS_AS(built("amg:nullspace=", A), InputError);
  // The good ones set up and apply.
  CHECK_NOTHROW(built("amg:coords=" + xy2.str(), A));
  CHECK_NOTHROW(built("amg:block=2", A));
  CHECK_NOTHROW(built("amg:nullspace=" + rows3.str() + ",nullspace=none", A));
}

TEST_CASE("amg nullspace: elasticity in far fewer iterations with the modes; the direct solution") {
  struct Case {
    const char* spec;
    int at_most;  // iterations with the rigid-body modes (measured: 2-D 10, 3-D 11; plain amg 93, 57)
  };
  for (const Case& c : {Case{"gen:elasticity2d:40", 16}, Case{"gen:elasticity3d:10", 18}}) {
    CAPTURE(std::string(c.spec));
    const CsrMatrix<double> A = generate_matrix(c.spec);
    const std::vector<double> b = multiply(A, random_vector(std::size_t(A.rows), 52));
    const int plain = iterations(A, b, "amg");
    std::vector<double> x;
    const int modes = iterations(A, b, std::string("amg:coords=") + c.spec, &x);
    const int blocks = iterations(A, b, std::string("amg:block=") + c.spec[14]);
    INFO("amg " << plain << ", block translations " << blocks << ", rigid-body modes " << modes);
    CHECK(modes <= c.at_most);
    CHECK(2 * modes <= plain);
    CHECK(modes < blocks);
    // The direct solution (Eigen's sparse Cholesky), to the tolerance's reach.
    std::vector<Eigen::Triplet<double>> entries;
    for (index_t i = 0; i < A.rows; ++i)
      for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        entries.emplace_back(i, A.col_idx[k], A.values[k]);
    Eigen::SparseMatrix<double> K(A.rows, A.cols);
    K.setFromTriplets(entries.begin(), entries.end());
    const Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(K);
    REQUIRE(ldlt.info() == Eigen::Success);
    const Eigen::VectorXd direct = ldlt.solve(Eigen::Map<const Eigen::VectorXd>(b.data(), A.rows));
    const Eigen::VectorXd got = Eigen::Map<const Eigen::VectorXd>(x.data(), A.rows);
    CHECK((got - direct).norm() <= 1e-5 * direct.norm());
  }
}

TEST_CASE("amg nullspace: set_values refreshes the hierarchy as a fresh set-up of the values") {
  const ElasticityProblem p = elasticity_problem(2, 16);
  CsrMatrix<double> A2 = p.A;
  for (double& v : A2.values) v *= 2.5;  // the same couplings, new values
  const std::string spec = "amg:coords=gen:elasticity2d:16";
  auto refreshed = built(spec, p.A);
  refreshed->set_values(A2);
  auto fresh = built(spec, A2);
  const Eigen::MatrixXd a = inverse_of(*refreshed, A2.rows), b = inverse_of(*fresh, A2.rows);
  CHECK((a - b).norm() <= 1e-12 * b.norm());
  CHECK((a - a.transpose()).norm() <= 1e-10 * a.norm());  // M^-1 symmetric
}
