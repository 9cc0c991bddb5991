// The linear solve of one gradient-algorithm trial, behind an interface so the hydraulics do not
// depend on how the junction system is solved: a sparse Cholesky factorisation (the default, as
// EPANET's own solver; network/direct_solver.cpp) or cgsolve's CG (any format, device, sorting;
// network/cg_solver.cpp).
#pragma once

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/solver.hpp"

namespace cgs::net {

struct LinearSolveStats {
  long iterations = 0;                // CG iterations, all refinement steps (0 for a direct solver)
  int refinement_steps = 0;           // CG solves run (1 without refinement)
  double seconds = 0;                 // wall time of the whole solve call
  double relative_residual = 0;       // ||D^-1/2 (b - A x)|| / ||D^-1/2 b||, true, in double
  double true_relative_residual = 0;  // ||b - A x|| / ||b|| of the unscaled system
  double backward_error = 0;          // componentwise: max_i |b - A x|_i / (|A| |x| + |b|)_i
  double setup_seconds = 0;           // of `seconds`: analyze (new pattern) or set_values
  bool converged = true;
  // A direct solver whose factorisation met a pivot <= 0 (the matrix is singular or not positive
  // definite, as EPANET's error 110): the row (junction index) of that pivot, and x is unchanged.
  // -1 when the factorisation succeeded (and always for CG, which has no pivots).
  int failed_row = -1;
};

// What --format/--kernel auto did over a run of solves (inspections 0 without it).
struct AutotuneRecord {
  int inspections = 0;  // inspector runs: one per sparsity pattern, so one per network
  int reused = 0;       // CG solves that took the choice without inspecting
  Format format = Format::csr;
  std::string kernel;  // GPU kernel; empty = the format's default
  bool sort_rows = false;
  std::string reason;  // the last inspection's one-line why
  double seconds = 0;  // the inspectors' cost, all runs (SolveTimes::autotune_seconds)
};

class LinearSolver {
 public:
  virtual ~LinearSolver() = default;
  // x holds the initial guess (the previous trial's heads) on entry.
  virtual LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                                 std::vector<double>& x) = 0;
  virtual std::string name() const = 0;
  // For reports: "direct" or "cg", and the library doing the work ("native", "cholmod", "eigen",
  // "cgsolve").
  virtual std::string kind() const { return "cg"; }
  virtual std::string backend() const { return "cgsolve"; }
  virtual AutotuneRecord autotune() const { return {}; }
  // The plan of the solver that ran (CG solvers), for the report.
  virtual const Plan* plan() const { return nullptr; }
  // After solve() met a pivot <= 0: the same system factorised in the file's junction order
  // instead of the fill-reducing one. False where the solver has no such fallback or that
  // factorisation fails too (then the caller has EPANET's error 110).
  // A solver for another thread, with this one's analysis (fill-reducing ordering, symbolic
  // factorisation) already done and nothing mutable shared: a study copies the baseline's solver
  // once per thread, so the analysis runs once per network. nullptr where the solver cannot be
  // copied (the caller makes a new one, which analyses on its first system).
  virtual std::unique_ptr<LinearSolver> clone_analysed() const { return nullptr; }
  // The order EPANET eliminates the junctions in (network/epanet_order.hpp), offered before the
  // first trial of every period. The native direct solver eliminates in it, unless it was given
  // one of its own (make_native_solver); the others order themselves.
  virtual void suggest_elimination_order(const std::vector<int>& order) { (void)order; }
  // The residual and backward error a direct solver measures after each solve, for the reports
  // (LinearSolveStats): one more pass over A per trial, 5% of a scenario on BWSN_Network_2. A
  // study reads neither and turns it off; the solution does not depend on it. CG solvers need
  // their residuals to stop and ignore this.
  virtual void measure_residuals(bool on) { (void)on; }
  // The threads one solve may use (>= 1; 1: the default). The native direct solver factorises
  // disjoint subtrees of its elimination tree at the same time (cholesky_subtrees.hpp), each
  // column as on one thread: its answers do not depend on the count. Others ignore it.
  virtual void set_threads(int threads) { (void)threads; }
  // Symbolic analyses this solver ran (direct solvers; -1 where not counted).
  virtual int analyses() const { return -1; }
  virtual bool solve_in_file_order(const CsrMatrix<double>& A, const std::vector<double>& b,
                                   std::vector<double>& x, LinearSolveStats& stats) {
    (void)A, (void)b, (void)x, (void)stats;
    return false;
  }
};

// An empty system is solved before it starts: x emptied, true.
inline bool empty_system(const CsrMatrix<double>& A, std::vector<double>& x) {
  if (A.rows != 0) return false;
  x.clear();
  return true;
}

// Row i of b - A x, and (|A| |x| + |b|)_i, the componentwise backward error's denominator: one
// pass over the row in its stored order, the same for the residual a direct solver reports as
// for the one CG stops on.
struct RowResidual {
  double r = 0, magnitude = 0;
};
inline RowResidual row_residual(const CsrMatrix<double>& A, const std::vector<double>& b,
                                const std::vector<double>& x, index_t i) {
  double ax = 0, magnitude = std::abs(b[i]);
  for (index_t k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
    const double t = A.values[k] * x[A.col_idx[k]];
    ax += t;
    magnitude += std::abs(t);
  }
  return {b[i] - ax, magnitude};
}

// How the network's CG solve stops (network/README.md, "The linear solves and the stopping test").
struct RefinementOptions {
  // Outer test: the componentwise backward error max_i |b - A x|_i / (|A| |x| + |b|)_i, computed
  // in double on the unscaled system. It is invariant under any diagonal scaling of the rows, so
  // it means the same for a row of scale 1e-4 as for one of 1e8; 0 runs the refinement until it
  // stops improving.
  double backward_error = 1e-15;
  // The solve counts as converged when the backward error is below this (rounding does not always
  // allow the target above; a CG solve that stops early leaves more).
  double accept_backward_error = 1e-12;
  // Refinement steps x <- x + CG(A, b - A x) at most; 1 is plain CG (one solve to options.cg.tol).
  int max_steps = 20;
};

// cgsolve's CG on the symmetrically scaled system D^-1/2 A D^-1/2 y = D^-1/2 b, x = D^-1/2 y
// (D = diag A); the scaling is the Jacobi preconditioner, so a request for jacobi runs plain CG
// on the scaled system (other preconditioners apply to the scaled system). Each CG solve
// (relative residual of the scaled correction system <= request.cg.tol) is wrapped in iterative
// refinement: the residual b - A x is recomputed in double on the unscaled system, and the
// correction solved for, until the componentwise backward error reaches
// refinement.backward_error or stops improving. The solver is planned and analyzed on the first
// system (the inspector runs then, for --format/--kernel auto) and every later system with the
// same sparsity pattern (every trial of a network) only sets its values; a new pattern is
// analyzed again. See network/README.md.
std::unique_ptr<LinearSolver> make_cg_solver(const SolveRequest& request,
                                             const RefinementOptions& refinement = {});
// The request as that solver runs its inner CG: no preconditioner for jacobi (the scaling is
// it), the generic CPU loop unless another was asked, no residual history.
SolveRequest network_cg_request(SolveRequest request);

// Sparse Cholesky A = L L^T with a fill-reducing ordering (network/direct_solver.cpp). The symbolic
// analysis (ordering, elimination tree, the pattern of L) runs on the first system and is reused
// by every later system with the same sparsity pattern (every trial and time step of a network:
// the GradientAlgorithm builds the CSR structure once); each solve factorises numerically. A pivot
// <= 0 stops the factorisation and is reported in LinearSolveStats::failed_row.
//   native:  netsolve's own (solver/precond/sparse_cholesky.hpp): EPANET's left-looking
//            factorisation and substitutions, minimum degree ordering; no library (the default:
//            automatic);
//   cholmod: SuiteSparse CHOLMOD (AMD ordering, LL^T), when built with it (CGSOLVE_HAVE_CHOLMOD),
//            its library loaded when first asked for (solver/cholmod_api.hpp);
//   eigen:   Eigen's SimplicialLDLT (AMD ordering), a pivot d <= 0 of D counts as the failure.
enum class DirectBackend { automatic, native, cholmod, eigen };
std::unique_ptr<LinearSolver> make_direct_solver(DirectBackend backend = DirectBackend::automatic);
// The native solver eliminating the junctions in this order (order[k]: the junction eliminated
// k-th), e.g. EPANET's own (netsolve --elimination-order); the size is checked on the first system.
std::unique_ptr<LinearSolver> make_native_solver(std::vector<int> elimination_order);
// Built with CHOLMOD and its library loads.
bool cholmod_available();

}  // namespace cgs::net
