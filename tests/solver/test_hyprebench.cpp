// hyprebench (bench/hypre, built where libhypre-dev is installed): hypre's BoomerAMG-PCG, the
// reference AMG of issue 52, on the system cgsolve solves. On 1 and 2 MPI ranks (the rows cut
// in two) it reaches the tolerance in few iterations and its solution is cgsolve's AMG-PCG's
// and the exact one (b = A * ones) within what the tolerance allows. Skipped without hypre.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "formats/generators.hpp"
#include "formats/matrix_market.hpp"
#include "run_command.hpp"
#include "solver/solve.hpp"
#include "test_matrices.hpp"

using namespace cgs;
using namespace cgs::testing;
namespace fs = std::filesystem;

#ifdef CGSOLVE_HYPREBENCH
#include <nlohmann/json.hpp>

namespace {

// max_i |a_i - b_i|.
double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

}  // namespace

TEST_CASE("hyprebench: hypre's BoomerAMG-PCG solves cgsolve's system as cgsolve's AMG does") {
  const std::string spec = "gen:poisson3d:16";
  const CsrMatrix<double> A = generate_matrix(spec);
  const std::vector<double> ones(std::size_t(A.rows), 1.0), b = multiply(A, ones);
  SolveRequest request;
  request.backend.format = Format::csr;
  request.backend.device = Device::omp;
  request.backend.threads = 2;
  request.cg.tol = 1e-10;
  request.precond = parse_precond("amg");
  std::vector<double> x_cgsolve;
  const SolveReport mine = solve_system(A, b, x_cgsolve, request);
  REQUIRE(mine.cg.ok());
  // The error of a solve to ||r|| / ||b|| <= 1e-10 is below cond(A) * 1e-10 (cond ~ 120 here).
  REQUIRE(max_difference(x_cgsolve, ones) <= 1e-7);

  const fs::path dir =
      fs::temp_directory_path() / ("hyprebench-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (int ranks : {1, 2}) {
    CAPTURE(ranks);
    const fs::path json = dir / "r.json", solution = dir / "x.mtx";
    // Open MPI refuses root and more ranks than cores unless told; other MPIs ignore these.
    const Run run = run_command(
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
        "OMPI_MCA_rmaps_base_oversubscribe=1 " CGSOLVE_MPIEXEC " -np " +
        std::to_string(ranks) + " " CGSOLVE_HYPREBENCH " --matrix " + spec +
        " --tol 1e-10 --json " + json.string() + " --solution " + solution.string());
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    nlohmann::json j;
    std::ifstream(json) >> j;
    CHECK(j["ranks"].get<int>() == ranks);
    CHECK(j["rows"].get<long>() == A.rows);
    CHECK(j["converged"].get<bool>());
    CHECK(j["true_relative_residual"].get<double>() <= 1e-10);
    CHECK(j["iterations"].get<int>() >= 2);
    CHECK(j["iterations"].get<int>() <= 15);
    const std::vector<double> x_hypre = read_vector_market(solution.string(), A.rows);
    CHECK(max_difference(x_hypre, ones) <= 1e-7);
    CHECK(max_difference(x_hypre, x_cgsolve) <= 2e-7);
  }
  fs::remove_all(dir);
}

TEST_CASE("hyprebench: a Matrix Market file and a random graph, cut between 2 ranks") {
  for (const std::string matrix : {std::string(CGSOLVE_SOURCE_DIR) + "/data/matrices/494_bus.mtx",
                                   std::string("gen:powerlaw:3000")}) {
    CAPTURE(matrix);
    const fs::path json =
        fs::temp_directory_path() / ("hyprebench-test-" + std::to_string(::getpid()) + ".json");
    const Run run = run_command(
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
        "OMPI_MCA_rmaps_base_oversubscribe=1 " CGSOLVE_MPIEXEC " -np 2 " CGSOLVE_HYPREBENCH
        " --matrix " +
        matrix + " --json " + json.string());
    INFO(run.output);
    REQUIRE(run.exit_code == 0);
    nlohmann::json j;
    std::ifstream(json) >> j;
    fs::remove(json);
    CHECK(j["rows"].get<long>() == load_matrix(matrix).rows);
    CHECK(j["true_relative_residual"].get<double>() <= 1e-8);
  }
}

TEST_CASE("hyprebench: a matrix that is not there, or an unknown option: exit status 2") {
  Run run = run_command(CGSOLVE_HYPREBENCH " --matrix /nonexistent/a.mtx");
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("/nonexistent/a.mtx") != std::string::npos);
  run = run_command(CGSOLVE_HYPREBENCH " --tolerance 1e-8");
  CHECK(run.exit_code == 2);
  CHECK(run.output.find("--tolerance") != std::string::npos);
}
#else
TEST_CASE("hyprebench: built without hypre (libhypre-dev), nothing to run" * doctest::skip()) {}
#endif
