// --precond auto: picks the preconditioner with the shortest estimated time to solution
// (set-up + iterations x time per iteration): Jacobi probed first for a few dozen iterations and
// kept where it will finish before another candidate is set up, then the others, each probed on
// the matrix itself. Says what it chose, why, and what each probe cost (Plan::inspection).
#pragma once

#include <string>

#include "formats/csr.hpp"
#include "solver/solver.hpp"

namespace cgs {

// The request must ask for --precond auto; the format may be fixed or auto (each candidate then
// runs the format inspector too).
// rhs: the solve's right-hand side, probed on when given and not zero; else a fixed random one.
// fsai:2's set-up cost, estimated before paying it: the pattern of tril(A^2) counted row by row
// (every stride-th row, scaled up, where counting all would cost more than a few dozen products
// of A) and the dense Cholesky of each row's block, m^3/6 flops for a row of m entries, at a
// host core's measured rate. A matrix whose A^2 is dense (bcsstk13: rows of up to 331 entries,
// 8e8 flops, 0.5-0.7 s) costs thousands of times an EPANET system's.
struct FsaiSetupEstimate {
  double tril_entries = 0;     // nnz of tril(A)
  double pattern_entries = 0;  // nnz of tril(A^2)
  index_t longest_row = 0;     // of tril(A^2) (of the rows counted)
  double factor_flops = 0;     // sum over rows of m^3 / 6
  double seconds = 0;          // the set-up that implies on one host core
  bool sampled = false;        // counted on every stride-th row only
};
FsaiSetupEstimate estimate_fsai_setup(const CsrMatrix<double>& A);
// Why fsai:2 is not worth setting up when its estimated set-up costs `seconds` or more (what the
// best candidate so far still needs); empty when it is below.
std::string fsai_setup_above(const CsrMatrix<double>& A, double seconds);

PlannedSolver choose_preconditioner(const SolveRequest& request, const CsrMatrix<double>& A,
                                    const std::vector<double>* rhs = nullptr);

}  // namespace cgs
