#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/tuning.hpp"
#include "network/batch_cg.hpp"
#include "network/linear_solver.hpp"
#include "solver/precond/cholesky.hpp"
#include "solver/precond/sparse_cholesky.hpp"
#include "solver/solve.hpp"

namespace cgs::net {
namespace {

double since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Symmetric diagonal scaling in place: A <- D^-1/2 A D^-1/2, returns D^-1/2.
std::vector<double> scale_symmetric(CsrMatrix<double>& A) {
  std::vector<double> s(A.rows, 1.0);
  for (index_t r = 0; r < A.rows; ++r) {
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) {
      if (A.col_idx[k] == r && A.values[k] > 0) s[r] = 1.0 / std::sqrt(A.values[k]);
    }
  }
  for (index_t r = 0; r < A.rows; ++r) {
    for (index_t k = A.row_ptr[r]; k < A.row_ptr[r + 1]; ++k) A.values[k] *= s[r] * s[A.col_idx[k]];
  }
  return s;
}

// r = b - A x in double, and the residual measures the stopping tests use.
struct Residual {
  std::vector<double> r;
  double scaled_norm = 0;     // ||D^-1/2 r||
  double norm = 0;            // ||r||
  double backward_error = 0;  // max_i |r_i| / (|A| |x| + |b|)_i
};

Residual residual(const CsrMatrix<double>& A, const std::vector<double>& b,
                  const std::vector<double>& x, const std::vector<double>& s) {
  Residual res;
  res.r.resize(b.size());
  double ss = 0, uu = 0;
  for (index_t i = 0; i < A.rows; ++i) {
    const auto [r, magnitude] = row_residual(A, b, x, i);
    res.r[i] = r;
    ss += (s[i] * r) * (s[i] * r);
    uu += r * r;
    if (magnitude > 0) res.backward_error = std::max(res.backward_error, std::abs(r) / magnitude);
  }
  res.scaled_norm = std::sqrt(ss);
  res.norm = std::sqrt(uu);
  return res;
}

}  // namespace

// The CPU runs the generic CG loop here, not the fused one: on the nearly singular trial
// systems of Richmond_standard (zones cut off by closed links) some inner solves reach the
// iteration limit, and which trial Newton accepts then depends on the order of additions
// alone (the fused loops' sums flipped Richmond from 8 trials to 40). The
// generic loop is the one validated against EPANET (tests/network); a robust treatment of
// those systems (deflating cut-off zones) is still to do.
SolveRequest network_cg_request(SolveRequest request) {
  if (request.precond.is("jacobi")) request.precond = PrecondSpec{};  // the scaling is it
  if (request.cpu_loop == CpuLoopAsk::automatic) request.cpu_loop = CpuLoopAsk::generic;
  request.cg.record_history = false;
  return request;
}

namespace {

class CgSolver final : public LinearSolver {
 public:
  CgSolver(const SolveRequest& request, const RefinementOptions& refinement)
      : request_(network_cg_request(request)), refinement_(refinement) {
    if (refinement_.max_steps < 1) refinement_.max_steps = 1;
    factor_start_ = request_.precond.is("chol") && precond::chol_fixed_order(request_.precond);
    given_order_ = request_.precond.is("chol") && precond::chol_given_order(request_.precond);
  }
  // A member of a batched study (batch_cg.hpp): the same refinement on this thread, each inner
  // CG solve handed to the batch.
  CgSolver(std::shared_ptr<BatchRendezvous> batch, const RefinementOptions& refinement)
      : refinement_(refinement), batch_(std::move(batch)) {
    if (refinement_.max_steps < 1) refinement_.max_steps = 1;
  }

  LinearSolveStats solve(const CsrMatrix<double>& A, const std::vector<double>& b,
                         std::vector<double>& x) override {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<double>& s = scale(A);
    double setup_seconds = 0;
    try {
      setup_seconds = prepare_solver(factor_start_ ? A : scaled_);
    } catch (const precond::NotPositiveDefinite& e) {  // as a direct solver's error 110
      LinearSolveStats stats;
      stats.failed_row = e.row;
      stats.converged = false;
      stats.seconds = since(start);
      return stats;
    }
    LinearSolveStats stats = refine(solver_.get(), A, b, x, s);
    stats.setup_seconds = setup_seconds;
    stats.seconds = since(start);
    return stats;
  }

  // A pivot <= 0 in EPANET's order: the direct path's fallbacks, the file's order and then the
  // minimum degree order, each a chol of its own (analysed on first use), so that CG's answer
  // stays the direct path's. False when both meet one too (EPANET's error 110).
  bool solve_in_file_order(const CsrMatrix<double>& A, const std::vector<double>& b,
                           std::vector<double>& x, LinearSolveStats& stats) override {
    if (!given_order() || batch_) return false;
    const auto start = std::chrono::steady_clock::now();
    if (A.row_ptr != fallback_row_ptr_ || A.col_idx != fallback_col_idx_) {
      for (auto& f : fallbacks_) f.reset();
      fallback_row_ptr_ = A.row_ptr;
      fallback_col_idx_ = A.col_idx;
    }
    for (int k = 0; k < 2; ++k) {
      try {
        if (!fallbacks_[k])
          fallbacks_[k] = plan_and_analyze(fallback_request(k, A), A).solver;
        else
          fallbacks_[k]->set_values(A);
      } catch (const precond::NotPositiveDefinite&) {
        fallbacks_[k].reset();
        continue;
      }
      stats = refine(fallbacks_[k].get(), A, b, x, ones_);
      stats.seconds = since(start);
      ++fallback_solves_;
      return true;
    }
    return false;
  }

  std::string name() const override {
    const std::string refined = refinement_.max_steps > 1 ? ", iterative refinement)" : ")";
    const std::string scaled =
        factor_start_ ? " (started from M^-1 b, stopped at the direct solve's backward error" +
                            refined
                      : " (symmetric Jacobi scaling" + refined;
    if (batch_) return "batched: " + batch_->engine_name() + scaled;
    if (!solver_) return "cg" + scaled;
    const Plan& p = solver_->plan();
    return "cg/" + std::string(request_.needs_inspector() ? "auto:" : "") + to_string(p.format) +
           (p.kernel.empty() ? "" : "/" + p.kernel) + "/" + to_string(p.device) +
           (p.sort_rows ? "/sorted" : "") + (p.rcm ? "/rcm" : "") +
           (p.precond.is("none") ? "" : "/" + p.precond.text()) + scaled;
  }

  AutotuneRecord autotune() const override { return record_; }

  // chol:order=given takes the order EPANET eliminates in (the hydraulics offer it before each
  // period's first trial); a new one is analysed on the next solve.
  void suggest_elimination_order(const std::vector<int>& order) override {
    if (!given_order() || (request_.precond.elimination_order &&
                           *request_.precond.elimination_order == order))
      return;
    request_.precond.elimination_order = std::make_shared<const std::vector<int>>(order);
    solver_.reset();
  }
  const Plan* plan() const override { return solver_ ? &solver_->plan() : nullptr; }

 private:
  // x from the solver (or the batch) on A x = b with the scaling s: the factor's M^-1 b or the
  // warm start, then CG corrections x <- x + D^-1/2 CG(D^-1/2 A D^-1/2, D^-1/2 (b - A x)) while
  // the componentwise backward error is above the target and falls.
  LinearSolveStats refine(Solver* solver, const CsrMatrix<double>& A,
                          const std::vector<double>& b, std::vector<double>& x,
                          const std::vector<double>& s) {
    LinearSolveStats stats;
    double scaled_b_norm = 0;
    for (std::size_t i = 0; i < b.size(); ++i) scaled_b_norm += (s[i] * b[i]) * (s[i] * b[i]);
    scaled_b_norm = std::sqrt(scaled_b_norm);
    const double b_norm = norm2(b);
    if (factor_start_)
      solver->precondition(b, x);  // x0 = M^-1 b: with EPANET's factor, EPANET's solution
    else if (x.size() != b.size())
      x.assign(b.size(), 0.0);  // else warm start from the previous heads

    Residual res = residual(A, b, x, s);
    // From a factor's answer CG only corrects what the factor got wrong: it stops where the
    // direct solve would (EPANET's passes accept_backward_error), not at the refinement's
    // target, which would move x off EPANET's rounding.
    const double target =
        factor_start_ ? refinement_.accept_backward_error : refinement_.backward_error;
    std::vector<double> rhs, dy;
    bool cg_ok = true, stalled = false;
    for (int step = 0; step < refinement_.max_steps; ++step) {
      if (res.backward_error <= target || res.scaled_norm == 0) break;
      // Correction: (D^-1/2 A D^-1/2) dy = D^-1/2 r, x += D^-1/2 dy.
      rhs.resize(b.size());
      for (std::size_t i = 0; i < b.size(); ++i) rhs[i] = s[i] * res.r[i];
      dy.assign(b.size(), 0.0);
      const CgResult cg =
          batch_ ? batch_->solve(scaled_, rhs, dy) : solver->solve(rhs, dy, false).cg;
      ++solves_;
      stats.iterations += cg.iterations;
      ++stats.refinement_steps;
      cg_ok = cg.ok();
      std::vector<double> candidate = x;
      for (std::size_t i = 0; i < b.size(); ++i) candidate[i] += s[i] * dy[i];
      Residual next = residual(A, b, candidate, s);
      if (tuning().netsolve_debug)
        std::fprintf(stderr, "step %d: %ld its%s, scaled %.3g -> %.3g, omega %.3g -> %.3g\n", step,
                     cg.iterations, cg_ok ? "" : " (CG stopped early)",
                     res.scaled_norm / scaled_b_norm, next.scaled_norm / scaled_b_norm,
                     res.backward_error, next.backward_error);
      // The backward error decides: keep a step that lowers it, stop once a step gains less
      // than a factor 2 (the residual is at rounding level: more CG cannot lower it).
      stalled = !(next.backward_error < 0.5 * res.backward_error);
      if (next.backward_error < res.backward_error) {
        x.swap(candidate);
        res = std::move(next);
      }
      if (stalled || !cg_ok) break;
    }
    stats.relative_residual = scaled_b_norm > 0 ? res.scaled_norm / scaled_b_norm : res.scaled_norm;
    stats.true_relative_residual = b_norm > 0 ? res.norm / b_norm : res.norm;
    stats.backward_error = res.backward_error;
    // Converged: the componentwise backward error is below refinement.accept_backward_error (the
    // refinement aims at refinement.backward_error, which rounding does not always allow).
    stats.converged = res.backward_error <= refinement_.accept_backward_error ||
                      (refinement_.max_steps == 1 && cg_ok);
    return stats;
  }

  // The direct path's fallback orders as chol requests: the file's (k = 0), minimum degree's.
  SolveRequest fallback_request(int k, const CsrMatrix<double>& A) const {
    SolveRequest r = request_;
    if (k == 0) {
      r.precond.argument = "order=natural,pivot=fail";
      r.precond.elimination_order.reset();
    } else {
      r.precond.elimination_order =
          std::make_shared<const std::vector<int>>(precond::minimum_degree_order(A));
    }
    return r;
  }

  // A scaled copy of A (values only, after the first): D^-1/2 A D^-1/2; returns D^-1/2. A
  // factor in a fixed order gets A itself (s = 1): scaling would change its rounding, and M
  // ~ A leaves CG nothing to gain from it.
  const std::vector<double>& scale(const CsrMatrix<double>& A) {
    same_pattern_ =
        (solver_ || batch_) && A.row_ptr == scaled_.row_ptr && A.col_idx == scaled_.col_idx;
    if (factor_start_ && same_pattern_) return ones_;  // set_values reads A itself
    if (same_pattern_)
      scaled_.values = A.values;
    else
      scaled_ = A;
    if (factor_start_) {
      ones_.resize(std::size_t(A.rows), 1.0);
      return ones_;
    }
    scaling_ = scale_symmetric(scaled_);
    return scaling_;
  }

  bool given_order() const { return given_order_; }

  // The solver for `system` (the scaled copy, or A itself for a fixed-order factor): planned
  // and analyzed on a new pattern (the inspector runs then, for auto), new values only on the
  // same pattern. Returns the seconds it took.
  double prepare_solver(const CsrMatrix<double>& system) {
    if (batch_) return 0;  // the batch engine takes the values with each solve
    const auto start = std::chrono::steady_clock::now();
    if (same_pattern_) {
      solver_->set_values(system);
      if (request_.needs_inspector()) ++record_.reused;
    } else {
      PlannedSolver planned = plan_and_analyze(request_, scaled_);
      solver_ = std::move(planned.solver);
      if (request_.needs_inspector()) remember(solver_->plan(), planned.inspect_seconds);
    }
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  void remember(const Plan& plan, double inspect_seconds) {
    ++record_.inspections;
    record_.format = plan.format;
    record_.kernel = plan.kernel;
    record_.sort_rows = plan.sort_rows;
    record_.reason = plan.inspection;
    record_.seconds += inspect_seconds;
  }

  SolveRequest request_;
  RefinementOptions refinement_;
  AutotuneRecord record_;
  CsrMatrix<double> scaled_;
  bool same_pattern_ = false;
  std::unique_ptr<Solver> solver_;
  std::shared_ptr<BatchRendezvous> batch_;  // set: a batched study's member
  // chol in a fixed order (natural, or given: EPANET's), whose M^-1 b starts CG, A unscaled;
  // given: the hydraulics' elimination order goes into the request.
  bool factor_start_ = false, given_order_ = false;
  std::unique_ptr<Solver> fallbacks_[2];    // solve_in_file_order's: file order, minimum degree
  std::vector<index_t> fallback_row_ptr_, fallback_col_idx_;  // their pattern
  int fallback_solves_ = 0;
  std::vector<double> scaling_, ones_;      // D^-1/2, or 1 (factor_start_)
  long solves_ = 0;
};

}  // namespace

std::unique_ptr<LinearSolver> make_cg_solver(const SolveRequest& request,
                                             const RefinementOptions& refinement) {
  return std::make_unique<CgSolver>(request, refinement);
}

std::unique_ptr<LinearSolver> make_batch_member_solver(std::shared_ptr<BatchRendezvous> batch,
                                                       const RefinementOptions& refinement) {
  return std::make_unique<CgSolver>(std::move(batch), refinement);
}

}  // namespace cgs::net
