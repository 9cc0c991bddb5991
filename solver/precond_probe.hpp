// --precond auto: picks the preconditioner with the shortest estimated time to solution
// (set-up + iterations x time per iteration), each candidate probed for a few dozen iterations
// on the matrix itself. Says what it chose, why, and what the probe cost (Plan::inspection).
#pragma once

#include "formats/csr.hpp"
#include "solver/solver.hpp"

namespace cgs {

// The request must ask for --precond auto; the format may be fixed or auto (each candidate then
// runs the format inspector too).
// rhs: the solve's right-hand side, probed on when given and not zero; else a fixed random one.
PlannedSolver choose_preconditioner(const SolveRequest& request, const CsrMatrix<double>& A,
                                   const std::vector<double>* rhs = nullptr);

}  // namespace cgs
