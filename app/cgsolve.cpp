// cgsolve: solve A x = b for a sparse SPD matrix with (Jacobi-preconditioned) CG, on the CPU
// or the GPU, in the sparse format of your choice. See README.md for the options and output.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>

#include "cli_options.hpp"
#include "formats/atomic_file.hpp"
#include "formats/convert.hpp"
#include "formats/generators.hpp"
#include "formats/matrix_market.hpp"
#include "report.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs {
namespace {

struct Arguments {
  std::string matrix, rhs, x0, output, report, history;
  bool info = false, validate = false, quiet = false;
  SolverCli solver;
};

// Outputs never destroy inputs: every file read is registered, and every output option that
// names one of them is refused (exit 2) before anything runs.
void protect_inputs(const Arguments& args) {
  for (const std::string* input : {&args.matrix, &args.rhs, &args.x0})
    if (!input->empty() && !is_generator_spec(*input)) protect_input(*input);
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--output", &args.output}, {"--report", &args.report}, {"--history", &args.history}};
  for (const auto& [option, path] : outputs)
    if (!path->empty()) check_not_an_input(*path, option);
}

// A test hook, for the tests of --validate only: CGSOLVE_TEST_PERTURB_X=e adds e * (1 + |x_i|)
// to every entry of x after the solve, as a wrong answer would be.
void perturb_for_tests(std::vector<double>& x) {
  const char* text = std::getenv("CGSOLVE_TEST_PERTURB_X");
  if (!text) return;
  const double e = std::atof(text);
  for (double& xi : x) xi += e * (1 + std::abs(xi));
}

// Symmetric storage and real general files alike: CG needs A = A^T.
void require_spd_candidate(const CsrMatrix<double>& A, const MatrixMarketInfo& info,
                           const std::string& path) {
  if (info.symmetry == MmSymmetry::skew_symmetric)
    throw InputError(path, 0,
                     "the matrix is skew-symmetric, so it is not SPD; CG needs an SPD matrix");
  if (A.rows != A.cols)
    throw InputError(path, 0,
                     "the matrix is " + std::to_string(A.rows) + " x " + std::to_string(A.cols) +
                         "; CG needs a square SPD matrix");
  index_t row = 0, col = 0;
  if (!is_symmetric(A, 1e-12, &row, &col))
    throw InputError(path, 0,
                     "the matrix is not symmetric (A(" + std::to_string(row + 1) + "," +
                         std::to_string(col + 1) + ") differs from A(" + std::to_string(col + 1) +
                         "," + std::to_string(row + 1) + ")); CG needs an SPD matrix");
}

// A progress line on stderr about twice a second, only when stderr is a terminal.
std::function<void(long, double)> progress_printer(bool* printed) {
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto last = start;
  long calls = 0;
  return [=](long iteration, double relative) mutable {
    if (++calls % 64 != 0) return;  // the clock is read only every 64th call
    const auto now = Clock::now();
    if (now - last < std::chrono::milliseconds(500)) return;
    last = now;
    const double elapsed = std::chrono::duration<double>(now - start).count();
    std::fprintf(stderr, "\r  iteration %ld, ||r||/||b|| = %.3e, %.0f iterations/s   ", iteration,
                 relative, iteration / elapsed);
    *printed = true;
  };
}

void write_history(const std::string& path, const CgResult& cg) {
  write_file_atomically(path, [&](std::FILE* f) {
    std::fprintf(f, "iteration,residual_norm,relative_residual\n");
    for (std::size_t k = 0; k < cg.residual_history.size(); ++k)
      std::fprintf(f, "%zu,%.17g,%.17g\n", k, cg.residual_history[k],
                   cg.residual_history[k] / cg.rhs_norm);
  });
}

int run(Arguments& args) {
  args.solver.resolve();
  protect_inputs(args);
  SolveRequest request = args.solver.request;
  RunSummary run;
  run.matrix_path = args.matrix;
  run.rhs_path = args.rhs;
  if (request.backend.device == Device::gpu) {
    std::string why;
    if (!cuda_device_available(&why)) throw DeviceError(why);
  }

  const auto start = std::chrono::steady_clock::now();
  // A Matrix Market file, or a generated matrix (gen:poisson3d:128, see formats/generators.hpp).
  const CsrMatrix<double> A = is_generator_spec(args.matrix)
                                  ? generate_matrix(args.matrix)
                                  : read_matrix_market(args.matrix, &run.matrix_info);
  if (is_generator_spec(args.matrix)) run.matrix_info.symmetry = MmSymmetry::symmetric;
  run.stats = compute_stats(A, request.backend.hack_size);
  if (args.info) {
    std::printf("matrix     %s (%s)\n%s", args.matrix.c_str(),
                describe_matrix_info(run.matrix_info).c_str(), format_stats(run.stats).c_str());
    return kExitOk;
  }
  require_spd_candidate(A, run.matrix_info, args.matrix);
  std::vector<double> b = args.rhs.empty() ? multiply(A, std::vector<double>(A.rows, 1.0))
                                           : read_vector_market(args.rhs, A.rows);
  if (b.size() != std::size_t(A.rows))
    throw InputError(args.rhs, 0,
                     "the right-hand side has " + std::to_string(b.size()) +
                         " entries but the matrix has " + std::to_string(A.rows) + " rows");
  std::vector<double> x;
  if (!args.x0.empty()) {
    x = read_vector_market(args.x0, A.rows);
    if (x.size() != std::size_t(A.rows))
      throw InputError(args.x0, 0,
                       "the initial guess has " + std::to_string(x.size()) +
                           " entries but the matrix has " + std::to_string(A.rows) + " rows");
  }
  run.read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.device_description = request.backend.device == Device::gpu      ? cuda_device_description()
                           : request.backend.device == Device::serial ? "CPU, 1 thread"
                                                                      : "CPU, OpenMP";

  bool progress_printed = false;
  request.cg.record_history = !args.history.empty();
  if (!args.quiet && isatty(fileno(stderr)))
    request.cg.progress = progress_printer(&progress_printed);
  run.solve = solve_system(A, b, x, request);
  if (progress_printed) std::fprintf(stderr, "\n");
  perturb_for_tests(x);

  if (args.rhs.empty()) {
    double error = 0;
    for (double xi : x) error += (xi - 1.0) * (xi - 1.0);
    run.error_vs_ones = std::sqrt(error / double(x.size()));
  }
  if (args.validate && run.solve.cg.ok()) {
    ValidationOptions v;
    v.tol = run.solve.plan.cg.tol;
    v.atol = run.solve.plan.cg.atol;
    v.solve_seconds = run.solve.times.solve_seconds;
    run.validation = validate_solution(A, b, x, v);
  }

  if (!args.output.empty())
    write_vector_market(args.output, x, "solution of " + args.matrix + " by cgsolve");
  if (!args.history.empty()) write_history(args.history, run.solve.cg);
  if (!args.report.empty())
    write_file_atomically(
        args.report, [&](std::FILE* f) { std::fprintf(f, "%s\n", to_json(run).dump(2).c_str()); });
  if (!args.quiet) print_summary(stdout, run);

  if (!run.solve.cg.ok()) {
    std::fprintf(stderr, "cgsolve: %s\n", to_string(run.solve.cg.status).c_str());
    return kExitNotConverged;
  }
  if (run.validation && !run.validation->passed) {
    std::fprintf(stderr, "cgsolve: validation failed: %s\n", run.validation->verdict.c_str());
    return kExitValidationFailed;
  }
  return kExitOk;
}

}  // namespace
}  // namespace cgs

int main(int argc, char** argv) {
  using namespace cgs;
  CLI::App app{"cgsolve: conjugate gradient for sparse symmetric positive definite systems"};
  app.set_version_flag("--version", std::string("cgsolve ") + CGSOLVE_VERSION);
  Arguments args;
  app.add_option("--matrix", args.matrix,
                 "Matrix Market file of the SPD matrix A (.mtx or .mtx.gz), or a generated one: "
                 "gen:poisson2d:M, gen:poisson3d:M, gen:powerlaw:N[:seed], gen:banded:N:B, "
                 "gen:waternet:N[:seed]")
      ->required();
  app.add_option("--rhs", args.rhs,
                 "Right-hand side b (Matrix Market array or n x 1 coordinate); "
                 "without it b = A * ones, so the exact solution is all ones");
  app.add_option("--x0", args.x0, "Initial guess (default: zeros)");
  app.add_option("--output", args.output, "Write the solution x here (Matrix Market array)");
  app.add_option("--report", args.report, "Write the summary as JSON here");
  app.add_option("--history", args.history, "Write the residual history here (CSV)");
  app.add_flag("--validate", args.validate,
               "Solve again independently (a direct Cholesky, or Eigen's CG when that would "
               "take too long) and judge x by its backward error (exit 3 when wrong)");
  app.add_flag("--info", args.info, "Print the matrix statistics and stop");
  app.add_flag("--quiet", args.quiet, "Print nothing but errors");
  add_solver_options(app, args.solver);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  try {
    return run(args);
  } catch (const InputError& e) {
    std::fprintf(stderr, "cgsolve: error: %s\n", e.what());
    return kExitBadInput;
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "cgsolve: GPU not available: %s\n", e.what());
    return kExitDeviceUnavailable;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "cgsolve: error: out of memory (the matrix or its format does not fit)\n");
    return kExitBadInput;
  }
}
