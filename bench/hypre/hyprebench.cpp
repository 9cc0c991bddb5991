// hyprebench: hypre's BoomerAMG-PCG on the system cgsolve solves (issue 52's reference AMG).
//
//   mpirun -np 2 hyprebench --matrix gen:poisson2d:1000 [--tol 1e-8] [--strong 0.25]
//              [--coarsen 10] [--interp 6] [--pmax 4] [--relax 6] [--agg-levels 0]
//              [--json FILE] [--solution FILE]
//
// The matrix is cgsolve's (a generator spec, whose rows each rank generates for itself, or a
// Matrix Market file) and b = A * ones, as cgsolve's without --rhs; the tolerance is on
// ||r|| / ||b|| from x = 0, as cgsolve's. Debian's hypre has no OpenMP: the same threads as a
// cgsolve run with --threads T is mpirun -np T. Prints one line (and --json writes an object):
// iterations, the true relative residual, the assembly into hypre's IJ format, BoomerAMG's
// set-up and PCG's solve timed apart. --solution writes x (Matrix Market array), for the test.
// Exit status: 0 converged, 1 not converged, 2 bad input.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>

#include "base/atomic_file.hpp"
#include "bench/hypre/hypre_reference.hpp"
#include "formats/generators.hpp"
#include "formats/matrix_market.hpp"

namespace {

struct Slice {
  cgs::CsrMatrix<double> rows;
  cgs::index_t first = 0, n = 0;
};

// This rank's consecutive share of the rows, generated or cut out of the whole matrix.
Slice my_rows(const std::string& spec, int rank, int ranks) {
  Slice s;
  cgs::CsrMatrix<double> whole;
  // The stencils' rows one by one; the random graphs (whose rows depend on the whole graph),
  // and files, whole.
  const bool by_rows = cgs::is_generator_spec(spec) && cgs::generate_matrix_rows(spec, 0, 1);
  if (by_rows) {
    s.n = cgs::generate_matrix_rows(spec, 0, 1)->cols;
  } else {
    whole = cgs::load_matrix(spec);
    s.n = whole.rows;
  }
  const cgs::index_t per = s.n / ranks, extra = s.n % ranks;
  s.first = rank * per + std::min<cgs::index_t>(rank, extra);
  const cgs::index_t count = per + (rank < extra ? 1 : 0);
  if (by_rows) {
    s.rows = *cgs::generate_matrix_rows(spec, s.first, count);
    return s;
  }
  s.rows.rows = count;
  s.rows.cols = s.n;
  const auto lo = whole.row_ptr[s.first], hi = whole.row_ptr[s.first + count];
  s.rows.row_ptr.clear();
  for (cgs::index_t i = 0; i <= count; ++i)
    s.rows.row_ptr.push_back(whole.row_ptr[s.first + i] - lo);
  s.rows.col_idx.assign(whole.col_idx.begin() + lo, whole.col_idx.begin() + hi);
  s.rows.values.assign(whole.values.begin() + lo, whole.values.begin() + hi);
  return s;
}

// y = rows * x for this rank's rows (x whole).
std::vector<double> multiply_rows(const cgs::CsrMatrix<double>& rows,
                                  const std::vector<double>& x) {
  std::vector<double> y(rows.rows, 0.0);
  for (cgs::index_t i = 0; i < rows.rows; ++i)
    for (auto k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k)
      y[i] += rows.values[k] * x[rows.col_idx[k]];
  return y;
}

// ||b - A x|| / ||b|| over all ranks.
double true_relative_residual(const Slice& s, const std::vector<double>& b,
                              const std::vector<double>& x) {
  const std::vector<double> ax = multiply_rows(s.rows, x);
  double local[2] = {0, 0}, global[2] = {0, 0};
  for (std::size_t i = 0; i < b.size(); ++i) {
    local[0] += (b[i] - ax[i]) * (b[i] - ax[i]);
    local[1] += b[i] * b[i];
  }
  MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return global[1] > 0 ? std::sqrt(global[0] / global[1]) : std::sqrt(global[0]);
}

int run(int argc, char** argv, int rank, int ranks) {
  CLI::App app{"hypre BoomerAMG-PCG on cgsolve's system (reference AMG)"};
  std::string matrix = "gen:poisson2d:1000", json_path, solution_path;
  double tol = 1e-8;
  cgs::bench::HypreAmgOptions o;
  app.add_option("--matrix", matrix, "generator spec or Matrix Market file");
  app.add_option("--tol", tol, "relative residual ||r|| / ||b||");
  app.add_option("--coarsen", o.coarsen_type, "BoomerAMG coarsening (10 HMIS, 8 PMIS, 6 Falgout)");
  app.add_option("--interp", o.interp_type, "interpolation (6 extended+i, 0 classical)");
  app.add_option("--pmax", o.pmax, "interpolation entries a row (0: no limit)");
  app.add_option("--strong", o.strong, "strength threshold (0.25; 0.5 suggested in 3-D)");
  app.add_option("--relax", o.relax_type, "smoother (6 hybrid sym. Gauss-Seidel, 8 l1-sym. GS)");
  app.add_option("--agg-levels", o.agg_levels, "levels of aggressive coarsening");
  app.add_option("--max-iterations", o.max_iterations, "PCG iteration limit");
  app.add_option("--json", json_path, "write the result as a JSON object");
  app.add_option("--solution", solution_path, "write x as a Matrix Market array");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) app.exit(e);  // prints the help or what is wrong
    return e.get_exit_code() == 0 ? 0 : 2;
  }
  const Slice s = my_rows(matrix, rank, ranks);
  const std::vector<double> b = multiply_rows(s.rows, std::vector<double>(s.n, 1.0));
  const cgs::bench::HypreResult r =
      cgs::bench::hypre_amg_pcg(s.rows, s.first, b, tol, o, MPI_COMM_WORLD);
  const double true_rel = true_relative_residual(s, b, r.x);
  if (rank == 0) {
    const double tts = r.assemble_seconds + r.setup_seconds + r.solve_seconds;
    std::printf(
        "hypre BoomerAMG-PCG %s, %d ranks: its %d  rel.res %.2e  assemble %.3f  set-up %.3f"
        "  solve %.3f  tts %.3f\n",
        matrix.c_str(), ranks, r.iterations, true_rel, r.assemble_seconds, r.setup_seconds,
        r.solve_seconds, tts);
    nlohmann::json j = {{"matrix", matrix},
                        {"ranks", ranks},
                        {"rows", s.n},
                        {"tol", tol},
                        {"iterations", r.iterations},
                        {"converged", r.converged},
                        {"true_relative_residual", true_rel},
                        {"times",
                         {{"assemble_s", r.assemble_seconds},
                          {"setup_s", r.setup_seconds},
                          {"solve_s", r.solve_seconds},
                          {"tts_s", tts}}},
                        {"options",
                         {{"coarsen", o.coarsen_type},
                          {"interp", o.interp_type},
                          {"pmax", o.pmax},
                          {"strong", o.strong},
                          {"relax", o.relax_type},
                          {"agg_levels", o.agg_levels}}}};
    if (!json_path.empty()) cgs::write_file_atomically(json_path, j.dump(1) + "\n");
    if (!solution_path.empty()) cgs::write_vector_market(solution_path, r.x, "hyprebench");
  }
  return r.converged ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = 2;
  try {
    status = run(argc, argv, rank, ranks);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hyprebench: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
