// --precond auto on the GPU (solver/precond_probe.cpp, issue 21 item 4): Jacobi's short probe
// kept on a small well-conditioned matrix (the data/matrices case, where auto paid a stronger
// candidate's set-up first: 1.66-20x Jacobi's time on an H100), fsai:2 not set up on bcsstk13
// (0.5 s of set-up against Jacobi's 28 ms solve), and each solved to its tolerance.
#include <string>

#include "formats/matrix_market.hpp"
#include "gpu_test_util.hpp"
#include "solver/precond_test_util.hpp"
#include "solver/solver.hpp"

namespace cgs {
namespace {

SolveRequest gpu_auto(double tol) { return testing::auto_request(Device::gpu, tol); }

std::vector<double> ones_times(const CsrMatrix<double>& A) {
  return multiply(A, std::vector<double>(std::size_t(A.rows), 1.0));
}

TEST_CASE("GPU --precond auto keeps Jacobi where its probe solves the system") {
  CGS_REQUIRE_GPU_OR_SKIP();
  // Strongly diagonally dominant random matrices (5,000 and 1,013 rows): their factors fill in,
  // so Jacobi goes first, and solves inside its probe. (LFAT5's factor is sparse: chol first.)
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

}  // namespace
}  // namespace cgs
