// --precond auto (solver/precond_probe.hpp): each candidate set up on the matrix and run for a
// few dozen CG iterations on a fixed random right-hand side; the time to solution is estimated
// from the residual's rate over the last third of the probe, the time per iteration and the
// set-up, and the fastest estimate wins. The winner's solver, as probed, is the one that solves.
#include "solver/precond_probe.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "solver/inspector.hpp"

namespace cgs {
namespace {

using Clock = std::chrono::steady_clock;

// Jacobi first (the baseline), then the ones that cut the iterations on EPANET's systems most
// (issue 13's table), then the GPU-friendly ones.
const char* const kCandidates[] = {"jacobi", "ic0", "fsai:2", "cheb:8", "bjacobi:64"};
// Long enough for CG's rate to settle past its first fast drop (40 predicted ic0 10x too many
// iterations on Exnet), short enough to cost a few solves of the cheapest candidate.
constexpr int kProbeIterations = 150;

struct Probe {
  std::string name;
  PlannedSolver planned;
  double setup_seconds = 0, per_iteration = 0, predicted_iterations = 0, estimate = 0;
  bool converged = false;
  std::string failure;  // set-up refused (e.g. bjacobi's memory) or a breakdown
};

std::string format_ms(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g ms", s * 1e3);
  return text;
}

// Iterations to reach tol from the history ||r_0|| .. ||r_K|| of a probe that did not converge:
// the rate over its last third, extrapolated. Infinite when the residual does not fall.
double predicted_iterations(const std::vector<double>& history, double target) {
  const std::size_t K = history.size() - 1, half = K - K / 3;
  if (K < 2 || history[K] <= 0) return double(K);
  // CG's residual norm is not monotone: the rate of its running minimum.
  double low_half = history[0];
  for (std::size_t k = 0; k <= half; ++k) low_half = std::min(low_half, history[k]);
  double low = low_half;
  for (std::size_t k = half; k <= K; ++k) low = std::min(low, history[k]);
  const double rate = std::pow(low / low_half, 1.0 / double(K - half));
  if (!(rate < 1)) return std::numeric_limits<double>::infinity();
  return double(K) + std::max(0.0, std::log(target / low) / std::log(rate));
}

Probe probe(const SolveRequest& request, const CsrMatrix<double>& A, const char* name,
            const std::vector<double>& b) {
  Probe p;
  p.name = name;
  SolveRequest r = request;
  r.precond = parse_precond(name);
  try {
    const auto start = Clock::now();
    p.planned = plan_and_analyze(r, A);
    p.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    CgOptions stop = p.planned.solver->plan().cg;
    stop.max_iters = kProbeIterations;
    stop.record_history = true;
    stop.progress = nullptr;
    std::vector<double> x(b.size(), 0.0);
    const SolveReport report = p.planned.solver->solve(b, x, false, &stop);
    const CgResult& cg = report.cg;
    if (cg.status == CgStatus::breakdown) {
      p.failure = "broke down in the probe";
      return p;
    }
    p.per_iteration = report.times.solve_seconds / double(std::max<long>(cg.iterations, 1));
    p.converged = cg.ok();
    const double target = std::max(stop.tol * norm2(b), stop.atol);
    p.predicted_iterations =
        p.converged ? double(cg.converged_at) : predicted_iterations(cg.residual_history, target);
    p.estimate = p.setup_seconds + p.predicted_iterations * p.per_iteration;
  } catch (const InputError& e) {
    p.failure = e.what();
  }
  return p;
}

}  // namespace

PlannedSolver choose_preconditioner(const SolveRequest& request, const CsrMatrix<double>& A) {
  const auto start = Clock::now();
  std::mt19937_64 rng(20261123);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<double> b(std::size_t(A.rows));
  for (double& v : b) v = uniform(rng);

  std::vector<Probe> probes;
  for (const char* name : kCandidates) probes.push_back(probe(request, A, name, b));
  Probe* best = nullptr;
  for (Probe& p : probes)
    if (p.failure.empty() && std::isfinite(p.estimate) && (!best || p.estimate < best->estimate))
      best = &p;
  if (!best) throw InputError("--precond auto: no candidate converges on this matrix");

  std::string why = best->name + ": about " + std::to_string(long(best->predicted_iterations)) +
                    " iterations x " + format_ms(best->per_iteration) + " + set-up " +
                    format_ms(best->setup_seconds) + " = " + format_ms(best->estimate);
  for (const Probe& p : probes) {
    if (&p == best) continue;
    why += "; " + p.name + " ";
    if (!p.failure.empty())
      why += "(" + p.failure + ")";
    else if (!std::isfinite(p.estimate))
      why += "(residual not falling in " + std::to_string(kProbeIterations) + " iterations)";
    else
      why += format_ms(p.estimate) + " (" + std::to_string(long(p.predicted_iterations)) + " it)";
  }
  PlannedSolver chosen = std::move(best->planned);
  const double spent = std::chrono::duration<double>(Clock::now() - start).count();
  why += "; probing " + std::to_string(probes.size()) + " candidates for " +
         std::to_string(kProbeIterations) + " iterations each cost " + format_ms(spent);
  chosen.inspect_seconds += spent - best->setup_seconds;  // the winner's set-up is the solve's
  const std::string format_choice = chosen.solver->plan().inspection;  // --format auto's
  chosen.solver->note_inspection("preconditioner " + why +
                                 (format_choice.empty() ? "" : "; format " + format_choice));
  return chosen;
}

}  // namespace cgs
