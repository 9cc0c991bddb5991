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

// Ski rental (auto within 1.5x of the best fixed candidate; BENCHMARKS 10l): Jacobi,
// set up and running on the solve's own b, goes on from its x before `candidate` is set up, until
// its runs (its probe's included) have taken `seconds`. At least `least_setup` (what any other
// candidate pays before its first iteration: the device's plan and upload, as Jacobi's own
// set-up shows); up to the candidate's estimated set-up (`candidate_setup`: chol's counted
// factor, fsai:2's tril(A^2); 0 where none is known), but no further than Jacobi's forecast end
// (`jacobi_ran` seconds so far, `jacobi_remaining` forecast, infinite where its residual did not
// fall) as far as it is believed: twice a `trusted` forecast, kUntrustedJacobi (10) times another,
// the factor that already rules chol and fsai:2 out against an untrusted Jacobi; an untrusted one
// only up to kUntrustedRentShare (a quarter) of the set-up, and only where its forecast as it is
// ends inside that (else the least). Where Jacobi then
// solves the system nothing else is set up (nos6: 93 iterations; bcsstk13: 1,426); where it does
// not, the candidate is tried as before, and the rent lost is at most the candidate's own set-up
// (ski rental's factor of 2) or the least set-up.
struct JacobiRent {
  double seconds = 0;
  std::string why;  // which of the three set it
};
JacobiRent jacobi_rent(const std::string& candidate, double least_setup, double candidate_setup,
                       double jacobi_ran, double jacobi_remaining, bool trusted);

// The first strong candidate's verdict after its first 20 iterations (and after its run by
// time): empty where it goes on, else why it is dropped: its forecast remaining time (`left`)
// loses to Jacobi's forecast taken as it is (`jacobi_left`; infinite where Jacobi has none) or to
// the best's bound. So AMG on an elasticity matrix (3,680 iterations, 5x Jacobi's time) is not
// run to the end. `doubt`: how many times `left` counts (a forecast from the first 20 iterations
// is CG's fast start: kEarlyForecastDoubt in precond_probe.cpp).
std::string dropped_first_candidate(double left, double jacobi_left, double bound,
                                    double doubt = 1);

// AMG's verdict after its first 20 iterations: empty where it goes on, else why it is dropped:
// its forecast is above kAmgWorkingIterations (AMG not working, as on elasticity without its
// near-nullspace) while Jacobi's forecast is finite but past its horizon (not trusted), so that
// no comparison with it can justify running AMG on.
std::string amg_not_working(double predicted_iterations, double jacobi_left, bool jacobi_trusted);

PlannedSolver choose_preconditioner(const SolveRequest& request, const CsrMatrix<double>& A,
                                    const std::vector<double>* rhs = nullptr);

}  // namespace cgs
