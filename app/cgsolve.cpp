// cgsolve: solve A x = b for a sparse SPD matrix with (Jacobi-preconditioned) CG, on the CPU
// or the GPU, in the sparse format of your choice. See README.md for the options and output.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <new>

#include "cli_options.hpp"
#include "base/atomic_file.hpp"
#include "base/tuning.hpp"
#include "formats/convert.hpp"
#include "formats/generators.hpp"
#include "formats/matrix_market.hpp"
#include "report.hpp"
#include "solver/distributed/distributed_solve.hpp"
#include "solver/solve.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace cgs {
namespace {

struct Arguments {
  std::string matrix, rhs, x0, output, report, history;
  bool info = false, validate = false, quiet = false;
  SolverCli solver;
  // The distributed solve (solver/distributed, docs/DISTRIBUTED.md).
  bool distributed = false;
  std::string partition = "contiguous", cg_variant = "classic", dist_loop = "fused";
  int replace_every = 0;
};

// Outputs never destroy inputs: every file read is registered, and every output option that
// names one of them is refused (exit 2) before anything runs.
void protect_inputs(const Arguments& args) {
  for (const std::string* input : {&args.matrix, &args.rhs, &args.x0})
    if (!input->empty() && !is_generator_spec(*input)) protect_input(*input);
  check_outputs({{"--output", args.output}, {"--report", args.report}, {"--history", args.history}});
}

// A test hook, for the tests of --validate only: Tuning::test_perturb_x = e (the tests set
// CGSOLVE_TEST_PERTURB_X) adds e * (1 + |x_i|) to every entry of x after the solve, as a wrong
// answer would be.
void perturb_for_tests(std::vector<double>& x) {
  const double e = tuning().test_perturb_x;
  if (e == 0) return;
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

// The system to solve, read (or generated) and checked: A, b (A * ones without --rhs), x0.
struct System {
  CsrMatrix<double> A;
  std::vector<double> b, x;
};

System load_system(const Arguments& args, RunSummary& run) {
  const auto start = std::chrono::steady_clock::now();
  System sys;
  // A Matrix Market file, or a generated matrix (gen:poisson3d:128, see formats/generators.hpp).
  sys.A = is_generator_spec(args.matrix) ? generate_matrix(args.matrix)
                                         : read_matrix_market(args.matrix, &run.matrix_info);
  const CsrMatrix<double>& A = sys.A;
  if (is_generator_spec(args.matrix)) run.matrix_info.symmetry = MmSymmetry::symmetric;
  run.stats = compute_stats(A, args.solver.request.backend.hack_size);
  if (args.info) return sys;
  require_spd_candidate(A, run.matrix_info, args.matrix);
  sys.b = args.rhs.empty() ? multiply(A, std::vector<double>(A.rows, 1.0))
                           : read_vector_market(args.rhs, A.rows);
  if (sys.b.size() != std::size_t(A.rows))
    throw InputError(args.rhs, 0,
                     "the right-hand side has " + std::to_string(sys.b.size()) +
                         " entries but the matrix has " + std::to_string(A.rows) + " rows");
  if (!args.x0.empty()) {
    sys.x = read_vector_market(args.x0, A.rows);
    if (sys.x.size() != std::size_t(A.rows))
      throw InputError(args.x0, 0,
                       "the initial guess has " + std::to_string(sys.x.size()) +
                           " entries but the matrix has " + std::to_string(A.rows) + " rows");
  }
  run.read_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return sys;
}

int print_info(const Arguments& args, const RunSummary& run) {
  std::printf("matrix     %s (%s)\n%s", args.matrix.c_str(),
              describe_matrix_info(run.matrix_info).c_str(), format_stats(run.stats).c_str());
  return kExitOk;
}

// After the solve (one process, or rank 0 of a distributed one): the checks, the files, the
// summary and the exit code.
int report_solution(const Arguments& args, RunSummary& run, const System& sys,
                    std::vector<double>& x) {
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
    run.validation = validate_solution(sys.A, sys.b, x, v);
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

// --device auto makes the GPU's context while it reads an input that takes longer to read than
// the context to make (~0.33 s on the H200's host: about a 96 MiB Matrix Market file, or a
// generated system of 3 million rows, gen:poisson2d:1000 taking 0.13 s). Smaller ones count the
// context in the GPU's fixed cost instead, so that a solve the CPU wins never waits for it.
bool reads_long(const std::string& matrix) {
  std::error_code error;
  if (!is_generator_spec(matrix))
    return std::filesystem::file_size(matrix, error) >= (96u << 20) && !error;
  // gen:KIND:N[:...]: N a side (poisson2d, poisson3d) or the rows.
  const std::size_t kind = matrix.find(':'), size = matrix.find(':', kind + 1);
  if (size == std::string::npos) return false;
  const double n = std::atof(matrix.c_str() + size + 1);
  const std::string name = matrix.substr(kind + 1, size - kind - 1);
  const double rows = name == "poisson3d" ? n * n * n : name == "poisson2d" ? n * n : n;
  return rows >= 3e6;
}

std::string device_description(Device device) {
  return device == Device::gpu      ? cuda_device_description()
         : device == Device::serial ? "CPU, 1 thread"
                                    : "CPU, OpenMP";
}

int run(Arguments& args) {
  args.solver.resolve();
  protect_inputs(args);
  SolveRequest request = args.solver.request;
  RunSummary run;
  run.matrix_path = args.matrix;
  run.rhs_path = args.rhs;
  // The device's context and the pinned buffers of large uploads are made while the input is
  // read: no part of a solve, they would otherwise land in the first upload (~20 ms:
  // BENCHMARKS 20p).
  std::future<void> device_ready;
  if (request.backend.device == Device::gpu && !request.device_auto) {
    std::string why;
    if (!cuda_device_available(&why)) throw DeviceError(why);
    device_ready = std::async(std::launch::async, cuda_prepare_uploads);
  } else if (request.device_auto && reads_long(args.matrix) && cuda_device_present()) {
    // A guess: a device that turns out unusable leaves the choice to find that out itself.
    device_ready = std::async(std::launch::async, [] {
      try {
        cuda_prepare_uploads();
      } catch (const DeviceError&) {
      }
    });
  }
  System sys = load_system(args, run);
  if (device_ready.valid()) device_ready.get();
  if (args.info) return print_info(args, run);
  run.device_description = device_description(request.backend.device);

  bool progress_printed = false;
  request.cg.record_history = !args.history.empty();
  if (!args.quiet && isatty(fileno(stderr)))
    request.cg.progress = progress_printer(&progress_printed);
  std::vector<double> x = sys.x;
  run.solve = solve_system(sys.A, sys.b, x, request);
  if (progress_printed) std::fprintf(stderr, "\n");
  run.device_description = device_description(run.solve.plan.device);
  return report_solution(args, run, sys, x);
}

// Every rank of `mpirun -np P cgsolve ...` runs this. Rank 0 reads the inputs and writes every
// output; the others hold only their rows. An error rank 0 finds in the inputs is shared, so all
// ranks stop with it (only rank 0 prints it); a failure later on one rank ends the job.
int run_distributed(Arguments& args, const dist::MpiSession& session) {
  const bool root = session.rank() == 0;
  RunSummary run;
  run.matrix_path = args.matrix;
  run.rhs_path = args.rhs;
  System sys;
  dist::DistributedRequest d;
  // A generated stencil with b = A * ones and x0 = 0 in row blocks: every rank generates its own
  // rows (METIS needs the whole graph on rank 0).
  const bool per_rank = !args.info && args.rhs.empty() && args.x0.empty() &&
                        args.partition == "contiguous" && dist::generated_per_rank(args.matrix);
  std::string error;
  int error_code = kExitBadInput;
  try {
    args.solver.resolve();
    d.request = args.solver.request;
    if (d.request.device_auto)
      throw InputError("--device auto chooses for one process; the distributed solve needs "
                       "--device cpu or gpu for its ranks");
    d.partition = dist::parse_partition(args.partition);
    d.variant = dist::parse_cg_variant(args.cg_variant);
    d.replace_every = args.replace_every;
    d.loop = dist::parse_dist_loop(args.dist_loop);
    if (d.partition == dist::PartitionKind::metis && !dist::metis_available())
      (void)dist::make_partition(CsrMatrix<double>{}, 2, d.partition);  // throws why
    if (d.request.backend.device == Device::gpu) {
      std::string why;
      if (!cuda_device_available(&why)) throw DeviceError(why);
    }
    if (root) {
      protect_inputs(args);
      if (per_rank)
        run.matrix_info.symmetry = MmSymmetry::symmetric;
      else
        sys = load_system(args, run);
      if (!args.info) (void)dist::distributed_plan(d, sys.A.rows, session.size());
    }
  } catch (const DeviceError& e) {
    error = std::string("GPU not available: ") + e.what();
    error_code = kExitDeviceUnavailable;
  } catch (const std::exception& e) {
    error = std::string("error: ") + e.what();
  }
  error = session.share_error(error);
  if (!error.empty()) {
    if (root) std::fprintf(stderr, "cgsolve: %s\n", error.c_str());
    return error_code;
  }
  if (args.info) return root ? print_info(args, run) : kExitOk;

  bool progress_printed = false;
  d.request.cg.record_history = !args.history.empty();
  if (root && !args.quiet && isatty(fileno(stderr)))
    d.request.cg.progress = progress_printer(&progress_printed);
  dist::DistributedOutcome outcome;
  try {
    outcome = per_rank
                  ? dist::solve_distributed_generated(session, args.matrix, d, &run.stats)
                  : dist::solve_distributed(session, root ? &sys.A : nullptr,
                                            root ? &sys.b : nullptr, root ? &sys.x : nullptr, d);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cgsolve: rank %d: %s\n", session.rank(), e.what());
    session.abort(kExitBadInput);
  }
  if (progress_printed) std::fprintf(stderr, "\n");
  if (!root) return outcome.solve.cg.ok() ? kExitOk : kExitNotConverged;  // as rank 0
  run.solve = std::move(outcome.solve);
  run.distributed = std::move(outcome.distributed);
  run.device_description =
      std::to_string(session.size()) + " MPI ranks, " +
      (d.request.backend.device == Device::gpu ? "one GPU each" : "CPU, OpenMP in each") +
      (per_rank ? ", each generating its own rows" : "");
  if (per_rank && args.validate && run.solve.cg.ok()) {  // the reference needs the whole matrix
    sys.A = generate_matrix(args.matrix);
    sys.b = multiply(sys.A, std::vector<double>(sys.A.rows, 1.0));
  }
  return report_solution(args, run, sys, outcome.x);
}

}  // namespace
}  // namespace cgs

int main(int argc, char** argv) {
  using namespace cgs;
  CLI::App app{"cgsolve: conjugate gradient for sparse symmetric positive definite systems"};
  app.set_version_flag("--version", std::string("cgsolve ") + CGSOLVE_VERSION);
  Arguments args;
  TuningCli tuning_cli;
  app.add_option(
         "--matrix", args.matrix,
         "Matrix Market file of the SPD matrix A (.mtx or .mtx.gz), or a generated one: "
         "gen:poisson2d:M, gen:poisson3d:M (or NX:NY:NZ), gen:powerlaw:N[:seed], gen:banded:N:B, "
         "gen:waternet:N[:seed[:loops[:decades]]], gen:elasticity2d:M, gen:elasticity3d:M")
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
  app.add_flag("--distributed", args.distributed,
               "Run the distributed solve over the MPI ranks (implied under mpirun with more "
               "than one process; see docs/DISTRIBUTED.md)");
  app.add_option("--partition", args.partition,
                 "Distributed: contiguous (row blocks balanced by nonzeros) or metis (a graph "
                 "partition that cuts the halo; needs METIS)")
      ->capture_default_str();
  app.add_option("--cg-variant", args.cg_variant,
                 "Distributed: classic (two reductions per iteration) or single-reduction "
                 "(Chronopoulos-Gear, one reduction of three numbers)")
      ->capture_default_str();
  app.add_option("--dist-loop", args.dist_loop,
                 "Distributed: fused (classic CG on CPU ranks with a pointwise preconditioner: "
                 "the vector updates inside the product's pass) or plain (a pass per operation; "
                 "what runs wherever fused is not offered)")
      ->capture_default_str();
  app.add_option("--replace-every", args.replace_every,
                 "Distributed single-reduction CG: recompute the true residual every k "
                 "iterations (0 = whenever ||r|| fell 100-fold since the last time)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_tuning_options(app, tuning_cli, true);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  tuning_cli.apply();
  const int launched = dist::launcher_world_size();
  try {
    if (args.distributed || launched > 1) {
      if (!dist::mpi_built())
        throw InputError("this cgsolve was built without MPI" +
                         (launched > 1 ? ", so each of the " + std::to_string(launched) +
                                             " processes mpirun started would solve the "
                                             "whole system alone; configure with an MPI"
                                       : std::string(": --distributed needs one")));
      const dist::MpiSession session(&argc, &argv);
      return run_distributed(args, session);
    }
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
