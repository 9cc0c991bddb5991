// --precond auto (solver/precond_probe.hpp): each candidate set up on the matrix and run for a
// few dozen CG iterations on the solve's right-hand side (or a fixed random one; the first
// candidate on the solve's own b runs for up to auto_first_probe_seconds, as its start); the time to
// solution is estimated from the residual's rate over the last third of the probe, the time per
// iteration and the set-up, and the fastest estimate wins. The winner's solver, as probed, is the
// one that solves, and it starts from its probe's x (PlannedSolver::warm_start), so the probe of
// the winner is not repeated.
//
// The probe is bounded (issue 21: at most max(5 ms, 20% of the chosen solve)): the strongest
// candidate goes first, and when its probe already converged nothing else is tried (nothing can
// beat a solved system), nor when its rate says it will finish in under kProbeOthersAbove (the
// others' set-ups and probes would cost more than they could save); the others are tried only while the probing spent on candidates that
// lose stays within that budget of the best estimate so far, a candidate whose set-up alone costs
// more than the best estimate is not run, and one that is run gets only the iterations that could
// still beat it. When no candidate's residual falls steadily enough to extrapolate, auto does not
// refuse: it solves with the candidate whose probe reached the lowest residual.
#include "solver/precond_probe.hpp"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <iterator>
#include <random>

#include "solver/inspector.hpp"

namespace cgs {
namespace {

using Clock = std::chrono::steady_clock;

// The candidate that is usually best on the device first, so that the bound on the others is
// tight early: on the CPU ic0 (issue 13's table), on the GPU fsai:2, whose two products a GPU
// runs at full width (best or within 1.6x of the best on EPANET's five systems, H100
// 2026-11-25), where ic0's level-scheduled solves pay a grid sync per level (its 150-iteration
// probe alone cost 240 ms on BWSN_Network_2).
const char* const kCpuCandidates[] = {"ic0", "jacobi", "fsai:2", "cheb:8", "bjacobi:64"};
// ic0 after cheb:8 there: its GPU iterations cost 0.3-1.5 ms (a grid sync per level), so its
// set-up and first run alone outspend the probe's budget (H100, 2026-11-25).
const char* const kGpuCandidates[] = {"fsai:2", "jacobi", "cheb:8", "ic0", "bjacobi:64"};
// Long enough for CG's rate to settle past its first fast drop (40 predicted ic0 10x too many
// iterations on Exnet), short enough to cost a few solves of the cheapest candidate.
constexpr int kProbeIterations = 150;
// The first, short run of a probe: its time per iteration bounds the rest.
constexpr int kFirstRun = 20;
// The probing of candidates that lose may cost this share of the best estimate, or kMinBudget.
constexpr double kBudgetShare = 0.2, kMinBudget = 5e-3;
// A later candidate replaces the best so far only when its estimated remaining cost is this many
// times lower: a 150-iteration rate is optimistic for the weaker preconditioners (cheb:8 on
// BWSN_Network_2 was estimated below fsai:2 and took 18,198 iterations, fsai:2 9,445; H100,
// 2026-11-25), and both set-ups are paid by then.
constexpr double kSwitchMargin = 2;
// The first candidate's probe, on the solve's own right-hand side, runs for
// SolveRequest::auto_first_probe_seconds (0.25 s; at least kProbeIterations) before anything is
// extrapolated: its iterations are the solve's start, so they are not lost if it wins, and a
// rate read off 150 iterations misjudges superlinear CG by up to 7x (BWSN_Network_2 step 10: ic0
// predicted 2,269 iterations, took 337 on the CPU; on the GPU fsai:2's estimate let cheb:8
// replace it at 4.1x the time, H100, 2026-11-25). Most solves that the first candidate can do
// in this time end inside the probe.
// Below this estimated remaining time of the first candidate, nothing else is probed: on EPANET's
// systems (solves of 1-200 ms) probing the others cost more than any of them could save (it made
// auto 1.6-4x the best fixed candidate's time on the GPU, H100, 2026-11-25), and the first
// candidate's probe goes on as the solve.
constexpr double kProbeOthersAbove = 1.0;  // seconds

struct Probe {
  std::string name;
  PlannedSolver planned;
  double setup_seconds = 0, per_iteration = 0, predicted_iterations = 0, estimate = 0;
  bool converged = false;
  double reached = 1;   // the lowest ||r|| / ||b|| of the probe
  std::vector<double> x;     // where its last run ended (from x = 0)
  long iterations = 0;       // of that run
  double run_seconds = 0;    // that run's CG time
  std::string failure;  // set-up refused (e.g. bjacobi's memory) or a breakdown
  std::string pruned;   // why it was stopped early: it could not beat the best so far
};

std::string format_ms(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g ms", s * 1e3);
  return text;
}

// Iterations to reach tol from the history ||r_0|| .. ||r_K|| of a probe that did not converge:
// the rate over its last third, extrapolated. Infinite when the residual does not fall. (The
// slower of the last third's and the last sixth's rates was tried: on BWSN_Network_2 it called
// every candidate but fsai:2 not falling, ic0 included, which converges in 460; CG's running
// minimum plateaus for longer than a sixth of 150 iterations.)
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

// One probe run of at most `iterations` from x = 0; false on a breakdown.
bool run_probe(Probe& p, const std::vector<double>& b, int iterations) {
  CgOptions stop = p.planned.solver->plan().cg;
  stop.max_iters = iterations;
  stop.record_history = true;
  stop.progress = nullptr;
  std::vector<double> x(b.size(), 0.0);
  const SolveReport report = p.planned.solver->solve(b, x, false, &stop);
  const CgResult& cg = report.cg;
  p.x = std::move(x);
  p.iterations = cg.iterations;
  p.run_seconds = report.times.solve_seconds;
  if (cg.status == CgStatus::breakdown) {
    p.failure = "broke down in the probe";
    return false;
  }
  p.per_iteration = report.times.solve_seconds / double(std::max<long>(cg.iterations, 1));
  p.converged = cg.ok();
  const double target = std::max(stop.tol * norm2(b), stop.atol);
  const double b_norm = norm2(b);
  if (!cg.residual_history.empty() && b_norm > 0)
    p.reached = *std::min_element(cg.residual_history.begin(), cg.residual_history.end()) / b_norm;
  p.predicted_iterations =
      p.converged ? double(cg.converged_at) : predicted_iterations(cg.residual_history, target);
  p.estimate = p.setup_seconds + p.predicted_iterations * p.per_iteration;
  return true;
}

// `best`: the lowest estimate so far (infinite before the first); a candidate that cannot beat
// it is stopped as soon as that is known.
// `budget`: seconds this probe may spend besides its set-up (infinite for the first candidate).
// `first_on_own_rhs`: the first candidate, probed on the solve's b: it runs by time.
Probe probe(const SolveRequest& request, const CsrMatrix<double>& A, const char* name,
            const std::vector<double>& b, double best, double budget, bool first_on_own_rhs) {
  Probe p;
  p.name = name;
  SolveRequest r = request;
  r.precond = parse_precond(name);
  try {
    const auto start = Clock::now();
    p.planned = plan_and_analyze(r, A);
    p.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (p.setup_seconds >= best) {
      p.pruned = "set-up " + format_ms(p.setup_seconds) + " alone is above the best";
      return p;
    }
    if (p.setup_seconds >= budget) {
      p.pruned = "set-up " + format_ms(p.setup_seconds) + " spent the probe's budget";
      return p;
    }
    if (!run_probe(p, b, kFirstRun) || p.converged) return p;
    // Iterations that could still finish under the best estimate: fewer than the probe would
    // run means this candidate cannot win (its probe would cost more than the winner's solve).
    const double affordable = std::min(best - p.setup_seconds, budget - p.run_seconds) /
                              std::max(p.per_iteration, 1e-9);
    if (affordable <= double(kFirstRun)) {
      p.pruned = format_ms(p.per_iteration) + " an iteration: " +
                 (best - p.setup_seconds < budget - p.run_seconds ? "cannot beat the best"
                                                                   : "the probe's budget is spent");
      return p;
    }
    // The first candidate (nothing to beat yet) on the solve's own b: by time, see above.
    const double wanted =
        first_on_own_rhs ? std::max<double>(kProbeIterations, request.auto_first_probe_seconds /
                                                                  std::max(p.per_iteration, 1e-9))
                         : double(kProbeIterations);
    run_probe(p, b, int(std::min({wanted, affordable, 1e9})));
  } catch (const InputError& e) {
    p.failure = e.what();
  }
  return p;
}

// What finishing this candidate from its probe's x would still cost.
double remaining(const Probe& p) {
  return std::max(0.0, p.predicted_iterations - double(p.iterations)) * p.per_iteration;
}

bool usable(const Probe& p) {
  return p.failure.empty() && p.pruned.empty() && std::isfinite(p.estimate);
}

}  // namespace

PlannedSolver choose_preconditioner(const SolveRequest& request, const CsrMatrix<double>& A,
                                   const std::vector<double>* rhs) {
  const auto start = Clock::now();
  // The solve's own right-hand side where it is known: its residual history is the one the solve
  // will see (a random one made ic0 look 8x slower than it is on BWSN_Network_2 and bjacobi:64
  // converge where it does not).
  const bool own = rhs && rhs->size() == std::size_t(A.rows) && norm2(*rhs) > 0;
  std::vector<double> b(std::size_t(A.rows));
  if (own) {
    b = *rhs;
  } else {
    std::mt19937_64 rng(20261123);
    std::uniform_real_distribution<double> uniform(-1, 1);
    for (double& v : b) v = uniform(rng);
  }

  std::vector<Probe> probes;
  Probe* best = nullptr;
  std::string not_tried;
  const bool gpu = request.backend.device == Device::gpu;
  const auto& candidates = gpu ? kGpuCandidates : kCpuCandidates;
  const double inf = std::numeric_limits<double>::infinity();
  for (const char* name : candidates) {
    // What probing has cost beyond the best candidate's set-up and the run the solve continues.
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const double useful = best ? best->setup_seconds + (own ? best->run_seconds : 0) : 0;
    const double budget =
        best ? std::max(kMinBudget, kBudgetShare * best->estimate) - (elapsed - useful) : inf;
    if (best && best->converged && own) {
      not_tried += std::string("; ") + name + " (not tried: " + best->name +
                   "'s probe solved the system)";
      continue;
    }
    if (best && &*best == &probes.front() && remaining(*best) < kProbeOthersAbove) {
      not_tried += std::string("; ") + name + " (not tried: " + best->name + " has about " +
                   format_ms(remaining(*best)) + " left, less than probing could save)";
      continue;
    }
    if (budget <= 0) {
      not_tried += std::string("; ") + name + " (not tried: the probe's budget, " +
                   format_ms(std::max(kMinBudget, kBudgetShare * best->estimate)) +
                   ", is spent)";
      continue;
    }
    probes.push_back(
        probe(request, A, name, b, best ? best->estimate : inf, budget, own && probes.empty()));
    // The first usable candidate in order holds until another's remaining cost is clearly
    // lower (pointers into `probes` move as it grows: found again each time).
    best = nullptr;
    for (Probe& p : probes)
      if (usable(p) && (!best || kSwitchMargin * remaining(p) < remaining(*best))) best = &p;
  }
  std::string why;
  if (best) {
    why = best->name + ": about " + std::to_string(long(best->predicted_iterations)) +
          " iterations x " + format_ms(best->per_iteration) + " + set-up " +
          format_ms(best->setup_seconds) + " = " + format_ms(best->estimate);
  } else {  // nothing to extrapolate: the lowest residual reached, never a refusal
    for (Probe& p : probes)
      if (p.failure.empty() && p.planned.solver && (!best || p.reached < best->reached)) best = &p;
    if (!best) throw InputError("--precond auto: no candidate could be set up on this matrix");
    char reached[32];
    std::snprintf(reached, sizeof reached, "%.1e", best->reached);
    why = best->name + ": no candidate's residual fell steadily in its probe; this one reached " +
          reached + " of ||b||, the lowest";
  }
  for (const Probe& p : probes) {
    if (&p == best) continue;
    why += "; " + p.name + " ";
    if (!p.failure.empty())
      why += "(" + p.failure + ")";
    else if (!p.pruned.empty())
      why += "(" + p.pruned + ")";
    else if (!std::isfinite(p.estimate))
      why += "(residual not falling in " + std::to_string(kProbeIterations) + " iterations)";
    else
      why += format_ms(p.estimate) + " (" + std::to_string(long(p.predicted_iterations)) + " it)";
  }
  why += not_tried;
  PlannedSolver chosen = std::move(best->planned);
  const double spent = std::chrono::duration<double>(Clock::now() - start).count();
  why += "; probing " + std::to_string(probes.size()) + " of " +
         std::to_string(std::size(candidates)) + " candidates (" +
         (own ? "the first for up to " + format_ms(request.auto_first_probe_seconds) +
                    ", the others at most "
              : std::string("at most ")) +
         std::to_string(kProbeIterations) + " iterations each, on " +
         (own ? "the solve's right-hand side" : "a random right-hand side") + ") cost " +
         format_ms(spent);
  if (own && !best->x.empty()) {  // the solve goes on from where the winner's probe ended
    chosen.warm_start = std::move(best->x);
    chosen.warm_start_iterations = best->iterations;
    why += ", " + std::to_string(best->iterations) + " iterations of it kept as the solve's start";
  }
  chosen.inspect_seconds += spent - best->setup_seconds;  // the winner's set-up is the solve's
  const std::string format_choice = chosen.solver->plan().inspection;  // --format auto's
  chosen.solver->note_inspection("preconditioner " + why +
                                 (format_choice.empty() ? "" : "; format " + format_choice));
  return chosen;
}

}  // namespace cgs
