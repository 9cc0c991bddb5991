#pragma once
// hypre's BoomerAMG-PCG (Debian libhypre-dev) as the reference AMG beside cgsolve's (issue 52):
// the same matrix and right-hand side, the same relative residual tolerance (||r|| / ||b||, as
// cgsolve's), set-up and solve timed apart. Debian's hypre is built with MPI and without OpenMP,
// so "the same threads" is the same number of MPI ranks (mpirun -np 2 against --threads 2).
#include <mpi.h>

#include <span>
#include <string>
#include <vector>

#include "formats/csr.hpp"

namespace cgs::bench {

// BoomerAMG's choices, named as hypre names them (HYPRE_BoomerAMGSet*). The defaults are those
// hypre's documentation recommends for Poisson-like problems on several ranks: HMIS coarsening,
// extended+i interpolation with at most 4 entries a row, one sweep of hybrid symmetric
// Gauss-Seidel; strong threshold 0.25 (hypre suggests 0.5 in 3-D: --strong 0.5).
struct HypreAmgOptions {
  int coarsen_type = 10;  // 10 HMIS, 8 PMIS, 6 Falgout
  int interp_type = 6;    // 6 extended+i, 0 classical
  int pmax = 4;           // interpolation entries a row (0: no limit)
  double strong = 0.25;   // strength threshold
  int relax_type = 6;     // 6 hybrid symmetric Gauss-Seidel, 8 l1-symmetric Gauss-Seidel
  int agg_levels = 0;     // levels of aggressive coarsening
  int max_iterations = 1000;
};

struct HypreResult {
  std::vector<double> x;  // the whole solution, on every rank
  int iterations = 0;
  double final_relative_residual = 0;  // hypre's own (recursive) ||r|| / ||b||
  double assemble_seconds = 0;         // IJ matrix and vectors (hypre's format)
  double setup_seconds = 0;            // PCG set-up = BoomerAMG's set-up
  double solve_seconds = 0;
  bool converged = false;
};

// Solves A x = b from x = 0. `rows` is this rank's slice [first, first + count) of A (global
// column indices, as generate_matrix_rows gives it) and `b` the same slice of the right-hand
// side; the ranks of `comm` hold consecutive slices in rank order. MPI must be initialised.
HypreResult hypre_amg_pcg(const CsrMatrix<double>& rows, index_t first, std::span<const double> b,
                          double tol, const HypreAmgOptions& options, MPI_Comm comm);

}  // namespace cgs::bench
