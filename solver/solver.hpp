// A solver made from a Plan (solver/plan.hpp), in three stages as Eigen's sparse solvers have
// them:
//   analyze(A)     the pattern and the values: row orderings (P A P^T, once), the format and its
//                  kernel, the copy to the device, the preconditioner's set-up, the loop's work
//                  vectors;
//   set_values(A)  new values for the same pattern (netsolve's Newton trials): the format's
//                  values and the preconditioner's numeric part, nothing else;
//   solve(b, x)    b and the initial guess in, x out in A's own order; the true residual
//                  ||b - A x|| / ||b|| checked on the host in double against A itself.
// solve_system() (solver/solve.hpp) is the one-call path: plan (or inspect, for "auto"), analyze,
// solve.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "formats/csr.hpp"
#include "solver/cg_types.hpp"
#include "solver/plan.hpp"
#include "solver/precond/preconditioner.hpp"

namespace cgs {

struct SolveTimes {
  // --format/--kernel/--precond auto: what the inspector cost beyond the choice it made (timing
  // the candidates, building the ones that lost; 0 without it), and starting the OpenMP team,
  // which the first parallel region of any solve pays.
  double inspect_seconds = 0;
  // --precond auto: the part of inspect_seconds that ran the chosen candidate's own iterations,
  // kept as the solve's start (its probe from x = 0, and Jacobi's runs on from there): not a
  // loser's probing.
  double probe_kept_seconds = 0;
  double thread_start_seconds = 0;
  double reorder_seconds = 0;     // the permutations (RCM, sort by length) and P A P^T
  double convert_seconds = 0;     // CSR -> format, on the host (GPU: and the backend's set-up)
  double upload_seconds = 0;      // matrix and vectors to the device's memory
  double precond_seconds = 0;     // the preconditioner's set-up (phases in PrecondReport)
  double set_values_seconds = 0;  // the last set_values(): new values into format and M
  double solve_seconds = 0;       // the CG loop, device clock
  double download_seconds = 0;    // x back to the host
};

// The per-iteration SpMV times of a solve (CgResult::spmv), summarised; measured false when the
// loop did not time them (the report then says "not measured", never 0).
struct SpmvStats {
  bool measured = false;
  int every = 1;     // sampled every k-th iteration
  std::string what;  // "SpMV", or the fused loops' "SpMV pass (...)"
  long samples = 0;
  double median = 0, mean = 0, min = 0;
  double total = 0;  // over the solve's iterations (median x iterations when sampled)
};
SpmvStats summarise_spmv(const CgResult& cg);

struct SolveReport {
  Plan plan;  // what ran
  CgResult cg;
  double true_relative_residual = 0;  // ||b - A x|| / ||b|| in double on A itself
  std::string backend_name;           // e.g. "csr/omp", "hll/cuda"
  index_t nnz = 0;
  SolveTimes times;
  SpmvStats spmv;
  PrecondReport precond;
  // --precond auto: the CG iterations of the chosen candidate's probe, on this right-hand side,
  // whose x the solve started from (so the solve's own count is what it took after them).
  long probe_iterations = 0;
  double spmv_gflops() const;  // 2 nnz / median SpMV time; 0 when not measured
};

class Solver {
 public:
  virtual ~Solver() = default;
  const Plan& plan() const { return plan_; }
  // A must stay alive and unchanged until the next analyze or set_values (the true residual is
  // taken against it).
  virtual void analyze(const CsrMatrix<double>& A) = 0;
  virtual void set_values(const CsrMatrix<double>& A) = 0;
  // x: the initial guess (zeros if empty) in, the solution out. true_residual false skips the
  // host check (NaN in the report): the inspector's timing solves, callers with their own.
  // `stop`, when given, replaces the plan's tolerances and limits for this solve (the
  // inspector's short timing solves, netsolve's refinement steps).
  virtual SolveReport solve(const std::vector<double>& b, std::vector<double>& x,
                            bool true_residual = true, const CgOptions* stop = nullptr) = 0;
  // z = M^-1 r, the plan's preconditioner applied once on its device (z = r for none; a
  // pointwise one scales). With an exact factor M^-1 b is the solution, and an initial guess
  // a caller can test before CG runs (netsolve's solves with EPANET's factor: network/README.md).
  virtual void precondition(const std::vector<double>& r, std::vector<double>& z) = 0;

  // What the inspector timed and why it chose this solver's plan (the report prints it).
  void note_inspection(const std::string& text) { plan_.inspection = text; }
  // A decision made before the plan (--device auto's), first among the plan's reasons.
  void note_reason(const std::string& text) { plan_.reasons.insert(plan_.reasons.begin(), text); }

 protected:
  explicit Solver(Plan plan) : plan_(std::move(plan)) {}
  Plan plan_;
};

std::unique_ptr<Solver> make_solver(const Plan& plan);

// The plan for a request (the inspector's, when it says auto) and a solver analyzed on A: the
// inspector's winner as it built it, so nothing is built twice. The report's inspection cost
// is set on the solves of the returned solver.
struct PlannedSolver {
  std::unique_ptr<Solver> solver;
  double inspect_seconds = 0, thread_start_seconds = 0;
  // --precond auto, probing on the solve's right-hand side: the winner's probe x (an initial
  // guess better than zero, the answer itself when the probe converged) and its iterations.
  std::vector<double> warm_start;
  long warm_start_iterations = 0;
  double warm_start_seconds = 0;  // those iterations' time, inside inspect_seconds
};
// An explicit request's plan (no auto anywhere: the choosers above this file decide those) and
// a solver analyzed on A.
PlannedSolver analyze_planned(const SolveRequest& request, const CsrMatrix<double>& A);

// b and x checked against A before anything is planned: x is resized to zeros if empty.
void check_sizes(const CsrMatrix<double>& A, const std::vector<double>& b, std::vector<double>& x);

// y = A x on the host in double (the independent reference used for the true residual).
std::vector<double> multiply(const CsrMatrix<double>& A, const std::vector<double>& x);
double norm2(const std::vector<double>& v);

}  // namespace cgs
