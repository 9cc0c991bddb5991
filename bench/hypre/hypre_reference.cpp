#include "bench/hypre/hypre_reference.hpp"

#include <HYPRE.h>
#include <HYPRE_krylov.h>
#include <HYPRE_parcsr_ls.h>

#include <numeric>
#include <stdexcept>

namespace cgs::bench {
namespace {

void check(HYPRE_Int code, const char* what) {
  if (code != 0 && !HYPRE_CheckError(code, HYPRE_ERROR_CONV))
    throw std::runtime_error(std::string("hypre: ") + what + " failed (error " +
                             std::to_string(code) + ")");
}

// An IJ vector over rows [first, last] holding `values` (zeros when empty).
HYPRE_IJVector make_vector(MPI_Comm comm, HYPRE_BigInt first, HYPRE_BigInt last,
                           std::span<const double> values, std::vector<HYPRE_BigInt>& indices) {
  HYPRE_IJVector v = nullptr;
  check(HYPRE_IJVectorCreate(comm, first, last, &v), "IJVectorCreate");
  check(HYPRE_IJVectorSetObjectType(v, HYPRE_PARCSR), "IJVectorSetObjectType");
  check(HYPRE_IJVectorInitialize(v), "IJVectorInitialize");
  std::vector<double> zeros;
  if (values.empty()) zeros.assign(indices.size(), 0.0), values = zeros;
  check(HYPRE_IJVectorSetValues(v, HYPRE_Int(indices.size()), indices.data(), values.data()),
        "IJVectorSetValues");
  check(HYPRE_IJVectorAssemble(v), "IJVectorAssemble");
  return v;
}

HYPRE_IJMatrix make_matrix(MPI_Comm comm, const CsrMatrix<double>& rows, HYPRE_BigInt first) {
  const HYPRE_BigInt last = first + rows.rows - 1;
  HYPRE_IJMatrix A = nullptr;
  check(HYPRE_IJMatrixCreate(comm, first, last, first, last, &A), "IJMatrixCreate");
  check(HYPRE_IJMatrixSetObjectType(A, HYPRE_PARCSR), "IJMatrixSetObjectType");
  std::vector<HYPRE_Int> sizes(rows.rows);
  for (index_t i = 0; i < rows.rows; ++i) sizes[i] = rows.row_length(i);
  check(HYPRE_IJMatrixSetRowSizes(A, sizes.data()), "IJMatrixSetRowSizes");
  check(HYPRE_IJMatrixInitialize(A), "IJMatrixInitialize");
  std::vector<HYPRE_BigInt> row_ids(rows.rows), cols(rows.col_idx.begin(), rows.col_idx.end());
  std::iota(row_ids.begin(), row_ids.end(), first);
  check(HYPRE_IJMatrixSetValues(A, rows.rows, sizes.data(), row_ids.data(), cols.data(),
                                rows.values.data()),
        "IJMatrixSetValues");
  check(HYPRE_IJMatrixAssemble(A), "IJMatrixAssemble");
  return A;
}

HYPRE_Solver make_amg(const HypreAmgOptions& o) {
  HYPRE_Solver amg = nullptr;
  check(HYPRE_BoomerAMGCreate(&amg), "BoomerAMGCreate");
  HYPRE_BoomerAMGSetPrintLevel(amg, 0);
  HYPRE_BoomerAMGSetCoarsenType(amg, o.coarsen_type);
  HYPRE_BoomerAMGSetInterpType(amg, o.interp_type);
  HYPRE_BoomerAMGSetPMaxElmts(amg, o.pmax);
  HYPRE_BoomerAMGSetStrongThreshold(amg, o.strong);
  HYPRE_BoomerAMGSetRelaxType(amg, o.relax_type);
  HYPRE_BoomerAMGSetRelaxOrder(amg, 0);  // lexicographic within a rank: symmetric with type 6
  HYPRE_BoomerAMGSetNumSweeps(amg, 1);
  HYPRE_BoomerAMGSetAggNumLevels(amg, o.agg_levels);
  HYPRE_BoomerAMGSetTol(amg, 0.0);  // one V-cycle a PCG iteration
  HYPRE_BoomerAMGSetMaxIter(amg, 1);
  return amg;
}

// The whole solution on every rank, from each rank's slice.
std::vector<double> gather(MPI_Comm comm, const std::vector<double>& mine) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  std::vector<int> counts(ranks), offsets(ranks, 0);
  const int count = int(mine.size());
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  std::partial_sum(counts.begin(), counts.end() - 1, offsets.begin() + 1);
  std::vector<double> all(std::size_t(offsets.back()) + std::size_t(counts.back()));
  MPI_Allgatherv(mine.data(), count, MPI_DOUBLE, all.data(), counts.data(), offsets.data(),
                 MPI_DOUBLE, comm);
  return all;
}

}  // namespace

HypreResult hypre_amg_pcg(const CsrMatrix<double>& rows, index_t first, std::span<const double> b,
                          double tol, const HypreAmgOptions& options, MPI_Comm comm) {
  if (b.size() != std::size_t(rows.rows))
    throw std::invalid_argument("hypre_amg_pcg: b's slice and the matrix's rows differ in size");
  HYPRE_Init();
  HypreResult out;
  MPI_Barrier(comm);
  double t0 = MPI_Wtime();
  const HYPRE_BigInt lo = first, hi = first + rows.rows - 1;
  std::vector<HYPRE_BigInt> indices(rows.rows);
  std::iota(indices.begin(), indices.end(), lo);
  HYPRE_IJMatrix A = make_matrix(comm, rows, lo);
  HYPRE_IJVector bv = make_vector(comm, lo, hi, b, indices);
  HYPRE_IJVector xv = make_vector(comm, lo, hi, {}, indices);
  HYPRE_ParCSRMatrix parA = nullptr;
  HYPRE_ParVector parb = nullptr, parx = nullptr;
  HYPRE_IJMatrixGetObject(A, reinterpret_cast<void**>(&parA));
  HYPRE_IJVectorGetObject(bv, reinterpret_cast<void**>(&parb));
  HYPRE_IJVectorGetObject(xv, reinterpret_cast<void**>(&parx));
  MPI_Barrier(comm);
  double t1 = MPI_Wtime();
  out.assemble_seconds = t1 - t0;

  HYPRE_Solver pcg = nullptr;
  check(HYPRE_ParCSRPCGCreate(comm, &pcg), "ParCSRPCGCreate");
  HYPRE_PCGSetMaxIter(pcg, options.max_iterations);
  HYPRE_PCGSetTol(pcg, tol);
  HYPRE_PCGSetTwoNorm(pcg, 1);  // ||r||_2 / ||b||_2, as cgsolve's criterion
  HYPRE_PCGSetPrintLevel(pcg, 0);
  HYPRE_PCGSetLogging(pcg, 1);
  HYPRE_Solver amg = make_amg(options);
  HYPRE_PCGSetPrecond(pcg, reinterpret_cast<HYPRE_PtrToSolverFcn>(HYPRE_BoomerAMGSolve),
                      reinterpret_cast<HYPRE_PtrToSolverFcn>(HYPRE_BoomerAMGSetup), amg);
  check(HYPRE_ParCSRPCGSetup(pcg, parA, parb, parx), "ParCSRPCGSetup");
  MPI_Barrier(comm);
  double t2 = MPI_Wtime();
  out.setup_seconds = t2 - t1;
  check(HYPRE_ParCSRPCGSolve(pcg, parA, parb, parx), "ParCSRPCGSolve");
  MPI_Barrier(comm);
  out.solve_seconds = MPI_Wtime() - t2;

  HYPRE_Int iterations = 0;
  HYPRE_PCGGetNumIterations(pcg, &iterations);
  HYPRE_PCGGetFinalRelativeResidualNorm(pcg, &out.final_relative_residual);
  out.iterations = iterations;
  out.converged = out.final_relative_residual <= tol;
  std::vector<double> mine(rows.rows);
  HYPRE_IJVectorGetValues(xv, rows.rows, indices.data(), mine.data());
  out.x = gather(comm, mine);

  HYPRE_BoomerAMGDestroy(amg);
  HYPRE_ParCSRPCGDestroy(pcg);
  HYPRE_IJVectorDestroy(xv);
  HYPRE_IJVectorDestroy(bv);
  HYPRE_IJMatrixDestroy(A);
  HYPRE_Finalize();
  return out;
}

}  // namespace cgs::bench
