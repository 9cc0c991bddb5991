// --precond auto (solver/precond_probe.hpp). First a short Jacobi probe (kJacobiProbeIterations
// iterations on the solve's right-hand side, or a fixed random one): Jacobi has no set-up of its
// own, and on small well-conditioned matrices its whole solve costs less than any other candidate's
// set-up (data/matrices on the GPU: Jacobi 0.75-28 ms, auto 1.66-20x that when it set up a stronger
// candidate first, BENCHMARKS 10i). It is kept, and the solve goes on from its x, when it solved
// the system or its trusted forecast (kJacobiHorizon) leaves less than the least set-up (or its own
// set-up, which every other candidate pays as well). Otherwise a trusted Jacobi is the best so far,
// which a stronger candidate must beat on remaining time (its set-up and probe are spent); an
// untrusted one bounds the others only as far as it is believed (kUntrustedJacobi times) and
// wins only where no other candidate has a forecast. Before any
// other candidate is set up, a Jacobi that is not beaten yet goes on from its x for a rent
// (jacobi_rent, ski rental): at least the least set-up any candidate pays, up to that candidate's
// estimated set-up as far as Jacobi's forecast is believed. Where that solves the system (nos6,
// bcsstk13: Jacobi was best by 2-4x on the GPU, BENCHMARKS 10l) nothing else is set up; where not,
// the candidate is tried as before, and at most its own set-up (or the least one) was lost. Then
// the strongest candidate for the device runs once from x = 0 on the solve's own b for up to
// auto_first_probe_seconds, as the solve's start; the time to solution is estimated from the
// residual's rate over the last third of a probe, the time per iteration and the set-up, and the
// lowest remaining cost wins. The winner's solver, as probed, is the one that solves, and it starts
// from its probe's x (PlannedSolver::warm_start), so the probe of the winner is not repeated.
//
// The probe is bounded (at most max(5 ms, 20% of the chosen solve)): when a probe
// already converged nothing else is tried (nothing can beat a solved system), nor when the first
// strong candidate's rate says it will finish in under kProbeOthersAbove (the others' set-ups and
// probes would cost more than they could save); the others are tried only while the probing spent
// on candidates that lose stays within that budget of the best estimate so far, a candidate whose
// set-up alone costs more than the best's remaining time is stopped, fsai:2 is not set up at all
// when its pattern's estimated factorization (estimate_fsai_setup) costs more than that, and one
// that is run gets only the iterations that could still beat it. When no candidate's residual
// falls steadily enough to extrapolate, auto does not refuse: it solves with the candidate whose
// probe reached the lowest residual.
#include "solver/precond_probe.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <optional>
#include <string_view>

#include <omp.h>

#include "solver/inspector.hpp"
#include "solver/precond/cholesky.hpp"
#include "solver/precond/fsai.hpp"
#include "solver/precond_forecast.hpp"

namespace cgs {
namespace {

using Clock = std::chrono::steady_clock;

// Jacobi first (its short probe, see the top), then the candidate that is usually best on the
// device, so that the bound on the others is tight early: on the CPU ic0 (BENCHMARKS 9), on
// the GPU fsai:2, whose two products a GPU runs at full width (best or within 1.6x of the best on
// EPANET's five systems, BENCHMARKS 10b-10c), where ic0's level-scheduled solves pay a grid sync
// per level (its 150-iteration probe alone cost 240 ms on BWSN_Network_2). chol (the complete
// factor) comes first after Jacobi wherever its factor is small (a network's near-tree
// graph: 1.2-1.5x tril(A)'s entries): it solves in 1-2 iterations, faster than every other
// candidate on EPANET's five systems on both devices (BENCHMARKS 10m), so its probe is the solve
// and nothing else is tried. Where it would fill in (meshes) its count, made first, skips it.
// AMG right after Jacobi (a mesh's candidate: poisson2d:1000 in 3 s where the others took 27x
// that, 2 cores), its set-up estimated first (estimate_amg_setup) and cheaper than chol's where
// chol fills in (poisson2d:300: AMG 0.36 s in all, chol 2.5 s); on a network's graph after chol
// and the device's first strong candidate instead (it lost to ic0 by 3.9-21x on EPANET's
// systems, BENCHMARKS 17).
const char* const kCpuCandidates[] = {"jacobi", "amg", "chol", "ic0", "fsai:2", "cheb:8", "bjacobi:64"};
const char* const kCpuNetworkCandidates[] = {"jacobi", "chol",   "ic0",    "amg",
                                             "fsai:2", "cheb:8", "bjacobi:64"};
// ic0 after cheb:8 on the GPU: its iterations cost 0.3-1.5 ms there (a grid sync per level), so
// its set-up and first run alone outspend the probe's budget (BENCHMARKS 10b-10c).
const char* const kGpuCandidates[] = {"jacobi", "amg", "chol", "fsai:2", "cheb:8", "ic0", "bjacobi:64"};
const char* const kGpuNetworkCandidates[] = {"jacobi", "chol", "fsai:2",    "amg",
                                             "cheb:8", "ic0",  "bjacobi:64"};
// chol is counted (its ordering and symbolic analysis) only up to kCholeskyCountedRows
// (precond_forecast.hpp): beyond, the count alone costs more than a probe (AMD over ~1M rows
// takes about a second), and such systems are meshes where the factor fills in
// (gen:poisson2d:1000: 14x tril(A), 55 s to factor).
// Jacobi's probe: long enough to read a rate past CG's first fast drop on a well-conditioned
// matrix (and to solve the smallest outright: gr_900_900_crg takes 46, and 30 forecast 55, past
// what can be trusted), short enough that on the systems where it loses (EPANET's: 1,851-121,203
// Jacobi iterations) it costs a few percent of the solve: a GPU iteration of a small system is
// ~8 us, a serial CPU one 5-15 us against ic0's 1-4 ms solves.
// The solve goes on from its x when it is kept: measured serial on 2 cores (tol 1e-10), the
// iterations after 30 from the probe's x were 399 / 1,396 / 35 / 89 / 2,114 against 407 / 1,426 /
// 46 / 93 / 2,121 from zero on 494_bus / bcsstk13 / gr_900_900_crg / nos6 / Exnet step 3 (a
// restart keeps a little; an unbroken run would save the probe's own iterations).
constexpr int kJacobiProbeIterations = 50;
// ... but on the GPU, where Jacobi goes first, as long as its rent's least part (jacobi_rent:
// the GPU's least_setup, 2 ms): ~200 iterations of a small system (7-8 us each, BENCHMARKS 10l),
// in one run. Run on after a 50-iteration probe instead, CG restarts from the probe's x, which can
// cost the probe's whole 50 (nos6 then needs 93 more, its count from zero, serial), and a
// second solve call.
constexpr int kJacobiProbeIterationsGpu = 200;
// A Jacobi forecast further than this many times its probe's length is not trusted: the residual's
// rate over a few dozen iterations is CG's fast start, not its end (30 iterations forecast 57 on
// Exnet step 3, which takes 2,121, 167 on bcsstk13, which takes 1,426, and 164 on BWSN_Network_2
// step 10, which takes 118,393). An untrusted Jacobi is not kept, stops no other candidate, and
// is chosen only where no other candidate has a forecast at all.
constexpr double kJacobiHorizon = 1.5;
// ... but fsai:2's set-up estimate is held against it at this many times its forecast (bcsstk13's
// was 8.5x short): bcsstk13's fsai:2 (8e8 flops, 0.5-1.5 s of set-up) is not built where Jacobi's
// probe forecast 4 ms (GPU) to 75 ms (2 loaded cores, serial) more.
constexpr double kUntrustedJacobi = 10;
// Jacobi's rent (jacobi_rent) believes a trusted forecast up to this many times: running on from
// its x restarts CG, which can cost up to the iterations already run (BENCHMARKS 10l).
constexpr double kTrustedJacobi = 2;
// ... and an untrusted one only up to this share of the candidate's estimated set-up: where the
// candidate wins, the rent is lost, and the target is auto within 1.25x of the best fixed choice
// (gen:poisson2d:1000: AMG's set-up estimated at 2 s, Jacobi's 50 iterations forecast 719 of the
// 1,715 it needs; a whole rent made auto 2x AMG). A forecast trusted by then keeps Jacobi where
// it has less left than the candidate's set-up (why_not_probed).
constexpr double kUntrustedRentShare = 0.25;
// chol goes before AMG on a mesh-like graph where its forecast is below this many times AMG's
// estimated set-up (Choice::order_by_forecast).
constexpr double kCholOverAmg = 4;
// ... on systems of at most this many entries (bcsstk13's 83,883; gen:poisson2d:300 has 448,800).
constexpr double kCountCholBeforeAmg = 100000;
// Jacobi is kept when its trusted forecast remaining time is below this (or below its own set-up,
// which any other candidate pays too): a stronger candidate's set-up alone costs about this much
// on small systems (GPU: 1.3-2.5 ms before the first iteration, plus ~1.3 ms of auto's own
// bookkeeping, BENCHMARKS 10h-10i; CPU serial: ic0 0.1-0.8 ms, 10i).
// (ProbeRates::least_setup: 2 ms on the GPU, 0.2 ms on the CPU.)
// fsai:2's set-up is dominated by a dense Cholesky of each row's block of A on tril(A^2)'s
// pattern, m^3/6 flops for a row of m entries; seconds per such flop on a host (bcsstk13: 8.1e8
// flops, its values phase 0.51 s on 16 cores, BENCHMARKS 10i, 1.26-1.34 s on 2
// loaded cores, serial). Only used against bounds many times apart.
constexpr double kFsaiSecondsPerFlop = 1e-9;
// Long enough for CG's rate to settle past its first fast drop (40 predicted ic0 10x too many
// iterations on Exnet), short enough to cost a few solves of the cheapest candidate.
constexpr int kProbeIterations = 150;
// The first, short run of a probe: its time per iteration bounds the rest.
constexpr int kFirstRun = 20;
// ... and its forecast, read from those iterations, counts this many times against Jacobi's when
// the first strong candidate is kept or dropped: AMG on bcsstk13 forecast under a quarter of
// Jacobi's 89 ms left there (twice was not enough: kept, H200) and needed 554 iterations, 146 ms;
// where AMG suits the system it solves inside these iterations, or wins by far more.
constexpr double kEarlyForecastDoubt = 4;
// ... except for the first strong candidate on the solve's own b, whose iterations are taken to
// cost this many of Jacobi's (ic0's two triangular solves on the CPU, fsai:2's two products on
// the GPU, beside the product with A): its probe is then one run from x = 0, as long as
// auto_first_probe_seconds allow by that cost, and it is the solve's start where it wins. (2 cut
// ic0's run on bcsstk13 at 515 of the 654 iterations it needs, at 1.4x Jacobi's time an
// iteration, serial: the rest was a restarted solve.)
constexpr double kStrongOverJacobi = 1.5;
// ... and AMG's V-cycle this many (four products with A on the finest level, R and P, the
// coarser levels: BENCHMARKS 17), so that its run by time is not 4x longer than asked (bcsstk13:
// 500 iterations, 1 s, where chol, counted next, solves in 0.1-0.2 s).
constexpr double kAmgOverJacobi = 6;
// An AMG whose forecast from its first 20 iterations is above this many iterations does not
// work on the matrix (its coarse levels miss the smooth error: elasticity without its
// near-nullspace, gen:elasticity3d:12 68 iterations, bcsstk13 554; where it works, 8-20 on
// grids, 18 anisotropic): at kAmgOverJacobi Jacobi's cost an iteration, plus its set-up, it costs
// over 500 Jacobi iterations, and a Jacobi forecast past its horizon is not evidence that Jacobi
// needs more (gen:elasticity3d:12: 2,457 forecast, 125 needed; auto took AMG, 3x Jacobi's time).
constexpr int kAmgWorkingIterations = 50;
// The probing of candidates that lose may cost this share of the best estimate, or kMinBudget.
constexpr double kBudgetShare = 0.2, kMinBudget = 5e-3;
// A later candidate replaces the best so far only when its estimated remaining cost is this many
// times lower: a 150-iteration rate is optimistic for the weaker preconditioners (cheb:8 on
// BWSN_Network_2 was estimated below fsai:2 and took 18,198 iterations, fsai:2 9,445 on the GPU,
// BENCHMARKS 10b-10c), and both set-ups are paid by then.
constexpr double kSwitchMargin = 2;
// The first candidate's probe, on the solve's own right-hand side, runs for
// SolveRequest::auto_first_probe_seconds (0.25 s; at least kProbeIterations) before anything is
// extrapolated: its iterations are the solve's start, so they are not lost if it wins, and a
// rate read off 150 iterations misjudges superlinear CG by up to 7x (BWSN_Network_2 step 10: ic0
// predicted 2,269 iterations, took 337 on the CPU; on the GPU fsai:2's estimate let cheb:8
// replace it at 4.1x the time, BENCHMARKS 10b-10c). Most solves that the first candidate can do
// in this time end inside the probe.
// Below this estimated remaining time of the first candidate, nothing else is probed: on EPANET's
// systems (solves of 1-200 ms) probing the others cost more than any of them could save (it made
// auto 1.6-4x the best fixed candidate's time on the GPU, BENCHMARKS 10b-10c), and the first
// candidate's probe goes on as the solve.
constexpr double kProbeOthersAbove = 1.0;  // seconds

// ---- a probe: one candidate set up on A and run, its forecast and its report ----

struct Probe {
  std::string name;
  PlannedSolver planned;
  double setup_seconds = 0, per_iteration = 0, predicted_iterations = 0, estimate = 0;
  bool converged = false;
  double reached = 1;         // the lowest ||r|| / ||b|| of the probe
  std::vector<double> x;      // where its last run ended (from x = 0)
  long iterations = 0;        // of that run
  double run_seconds = 0;     // that run's CG time
  double probe_seconds = 0;   // all of its runs' CG time (what the probe cost besides the set-up)
  long probe_iterations = 0;  // all of its runs' iterations
  bool resumable = false;     // its x is the solve's start (probed on the solve's own b)
  bool trusted = true;        // its forecast may stop others (Jacobi's: see kJacobiHorizon)
  std::string failure;        // set-up refused (e.g. bjacobi's memory) or a breakdown
  std::string pruned;         // why it was stopped early: it could not beat the best so far
  std::string rent;           // Jacobi: how far it ran on past its probe, and why that far
  bool not_working = false;   // AMG dropped by amg_not_working: the others are not probed
};

// What finishing a probed candidate would still cost (defined with the rules below).
double remaining(const Probe& p);

// Jacobi's probe as the others see it: its time an iteration, and its forecast remaining time
// (infinite where it has none), held against the first strong candidate's forecast as it is.
struct JacobiFigures {
  double per_iteration = 0;
  double remaining = std::numeric_limits<double>::infinity();
  bool trusted = true;  // its forecast inside its horizon (kJacobiHorizon)
};

// A continued probe run of fewer iterations than this keeps the forecast of the runs before it
// (run_probe): its history is too short to read a rate from.
constexpr int kMinForecastIterations = 10;

double predicted_iterations(const std::vector<double>& history, double target) {
  return forecast_iterations(history, target);
}

// One probe run of at most `iterations`, from x = 0, or (`go_on`) from where its last run ended:
// then its iterations, run time and forecast cover all its runs since x = 0, as the solve that
// goes on from its x sees them (CG restarts from that x: its Krylov space is not kept, which
// can cost up to the iterations before: nos6 needs 93 more after a 50-iteration Jacobi probe,
// its count from zero, bcsstk13 1,378 against 1,426, BENCHMARKS 10l). False on a breakdown.
bool run_probe(Probe& p, const std::vector<double>& b, long iterations, bool go_on = false) {
  CgOptions stop = p.planned.solver->plan().cg;
  stop.max_iters = iterations;
  stop.record_history = true;
  stop.progress = nullptr;
  std::vector<double> x = go_on ? std::move(p.x) : std::vector<double>(b.size(), 0.0);
  const long before = go_on ? p.iterations : 0;
  const SolveReport report = p.planned.solver->solve(b, x, false, &stop);
  const CgResult& cg = report.cg;
  p.x = std::move(x);
  p.iterations = before + cg.iterations;
  p.run_seconds = (go_on ? p.run_seconds : 0) + report.times.solve_seconds;
  p.probe_seconds += report.times.solve_seconds;
  p.probe_iterations += cg.iterations;
  if (cg.status == CgStatus::breakdown) {
    p.failure = "broke down in the probe";
    return false;
  }
  p.per_iteration = p.run_seconds / double(std::max<long>(p.iterations, 1));
  p.converged = cg.ok();
  const double target = std::max(stop.tol * norm2(b), stop.atol);
  const double b_norm = norm2(b);
  const auto& history = cg.residual_history;
  if (!go_on) p.reached = 1;
  if (!history.empty() && b_norm > 0)
    p.reached = std::min(p.reached, *std::min_element(history.begin(), history.end()) / b_norm);
  // A run that goes on for too few iterations to read a rate from keeps the forecast of the
  // runs before it: Jacobi's rent on a loaded machine can run one iteration, whose two-point
  // history read as "done" once made auto keep Jacobi for a 3,000-iteration solve (the test
  // "--precond auto stops probing once its first candidate's probe solved the system", CI).
  if (go_on && !p.converged && history.size() <= std::size_t(kMinForecastIterations)) {
    p.predicted_iterations = std::max(p.predicted_iterations, double(p.iterations));
  } else {
    const double to_go =
        p.converged ? double(cg.converged_at) : predicted_iterations(history, target);
    p.predicted_iterations = double(before) + to_go;
  }
  p.estimate = p.setup_seconds + p.predicted_iterations * p.per_iteration;
  return true;
}

// Set up candidate p.name on A, timed.
void set_up(Probe& p, const SolveRequest& request, const CsrMatrix<double>& A) {
  SolveRequest r = request;
  r.precond = parse_precond(p.name);
  const auto start = Clock::now();
  p.planned = r.needs_inspector() ? inspect(r, A) : analyze_planned(r, A);
  p.setup_seconds = std::chrono::duration<double>(Clock::now() - start).count();
}

// Jacobi's short probe (see the top): `iterations` from x = 0.
Probe probe_jacobi(const SolveRequest& request, const CsrMatrix<double>& A,
                   const std::vector<double>& b, bool own, int iterations) {
  Probe p;
  p.name = "jacobi";
  p.resumable = own;
  try {
    set_up(p, request, A);
    run_probe(p, b, iterations);
    p.trusted = p.converged || p.predicted_iterations <= kJacobiHorizon * double(iterations);
  } catch (const InputError& e) {  // a set-up that refuses the matrix (a zero diagonal)
    p.failure = e.what();
  }
  return p;
}

// `best`: the best candidate's remaining cost so far (infinite before the first); a candidate
// that cannot beat it is stopped as soon as that is known.
// `budget`: seconds this probe may spend besides its set-up (infinite for the first strong one).
// `own`: b is the solve's own (the probe's x is then the solve's start where it wins);
// `first_on_own_rhs`: the first strong candidate on the solve's b: it runs by time.
Probe probe_strong(const SolveRequest& request, const CsrMatrix<double>& A, const char* name,
                   const std::vector<double>& b, double best, double budget, bool own,
                   bool first_on_own_rhs, JacobiFigures jacobi) {
  const double jacobi_per_iteration = jacobi.per_iteration;
  Probe p;
  p.name = name;
  p.resumable = own;
  set_up(p, request, A);
  if (p.setup_seconds >= best) {
    p.pruned = "set-up " + format_ms(p.setup_seconds) + " alone is above the best's remaining " +
               format_ms(best);
    return p;
  }
  if (p.setup_seconds >= budget) {
    p.pruned = "set-up " + format_ms(p.setup_seconds) + " spent the probe's budget";
    return p;
  }
  if (first_on_own_rhs && jacobi_per_iteration > 0 && !std::isfinite(best) &&
      !std::isfinite(jacobi.remaining)) {
    // Nothing to lose to (Jacobi's residual did not fall): one run from x = 0, its length from
    // Jacobi's time per iteration: no timing run thrown away and no restart (each cost
    // iterations, BENCHMARKS 10i).
    const double per =
        (p.name == "amg" ? kAmgOverJacobi : kStrongOverJacobi) * jacobi_per_iteration;
    const double affordable = (best - p.setup_seconds) / per;
    if (affordable <= double(kFirstRun)) {
      p.pruned = "cannot beat the best at about " + format_ms(per) + " an iteration";
      return p;
    }
    const double wanted =
        std::max<double>(kProbeIterations, request.auto_first_probe_seconds / per);
    run_probe(p, b, int(std::min({wanted, affordable, 1e9})));
    return p;
  }
  if (!run_probe(p, b, kFirstRun) || p.converged) return p;
  if (p.name == "amg") {  // AMG that does not work here is not held against a doubtful Jacobi
    p.pruned = amg_not_working(p.predicted_iterations, jacobi.remaining, jacobi.trusted);
    p.not_working = !p.pruned.empty();
    if (p.not_working) return p;
  }
  // The first strong candidate's forecast against Jacobi's as far as that is believed: one that
  // loses (AMG on an elasticity matrix) is dropped after these iterations, not run to the end.
  if (first_on_own_rhs) {
    p.pruned = dropped_first_candidate(remaining(p), jacobi.remaining, best, kEarlyForecastDoubt);
    if (!p.pruned.empty()) return p;
  }
  // Iterations that could still finish under the best's remaining cost: fewer than the probe
  // would run means this candidate cannot win (its probe would cost more than the winner's solve).
  const double affordable =
      std::min(best - p.setup_seconds, budget - p.run_seconds) / std::max(p.per_iteration, 1e-9);
  if (affordable <= double(kFirstRun)) {
    p.pruned = format_ms(p.per_iteration) + " an iteration: " +
               (best - p.setup_seconds < budget - p.run_seconds ? "cannot beat the best"
                                                                : "the probe's budget is spent");
    return p;
  }
  // The first strong candidate (its iterations the solve's start) on the solve's own b: by time.
  const double wanted =
      first_on_own_rhs ? std::max<double>(kProbeIterations, request.auto_first_probe_seconds /
                                                                std::max(p.per_iteration, 1e-9))
                       : double(kProbeIterations);
  // The first goes on from its x (its iterations are the solve's start where it wins).
  run_probe(p, b, int(std::min({wanted, affordable, 1e9})), first_on_own_rhs);
  if (first_on_own_rhs && !p.converged)
    p.pruned = dropped_first_candidate(remaining(p), jacobi.remaining, best);
  return p;
}

Probe probe(const SolveRequest& request, const CsrMatrix<double>& A, const char* name,
            const std::vector<double>& b, double best, double budget, bool own,
            bool first_on_own_rhs, JacobiFigures jacobi) {
  try {
    return probe_strong(request, A, name, b, best, budget, own, first_on_own_rhs,
                        jacobi);
  } catch (const InputError& e) {  // set-up refused (bjacobi's memory, ic0's pivots, ...)
    Probe p;
    p.name = name;
    p.failure = e.what();
    return p;
  }
}

// What finishing this candidate would still cost: from its probe's x where the solve goes on
// from there, else (probed on another b) the whole solve.
double remaining(const Probe& p) {
  const double done = p.resumable ? double(p.iterations) : 0.0;
  return std::max(0.0, p.predicted_iterations - done) * p.per_iteration;
}

bool usable(const Probe& p) {
  return p.failure.empty() && p.pruned.empty() && std::isfinite(p.estimate);
}

// The remaining cost another candidate must beat to be worth running on (its set-up, then its
// iterations): an untrusted forecast (Jacobi's) as far as it is believed (kUntrustedJacobi
// times), so that a candidate whose forecast loses even to that (AMG on an elasticity matrix:
// 3,680 iterations, 5x Jacobi's time) is dropped after its probe, not run to the end.
double bound(const Probe* best) {
  if (!best) return std::numeric_limits<double>::infinity();
  return remaining(*best) * (best->trusted ? 1 : kUntrustedJacobi);
}

// The first usable candidate in order holds until another's remaining cost is clearly lower; an
// untrusted forecast (Jacobi's, optimistic) only where no trusted one exists. Pointers into
// `probes` move as it grows: found again after each probe.
Probe* pick_best(std::vector<Probe>& probes) {
  for (const bool trusted : {true, false}) {
    Probe* best = nullptr;
    for (Probe& p : probes)
      if (usable(p) && p.trusted == trusted &&
          (!best || kSwitchMargin * remaining(p) < remaining(*best)))
        best = &p;
    if (best) return best;
  }
  return nullptr;
}

// What one probe cost and what it forecast, for the report.
std::string describe(const Probe& p) {
  std::string text = p.name + " (";
  if (!p.failure.empty()) return text + p.failure + ")";
  text += "set-up " + format_ms(p.setup_seconds);
  if (p.probe_iterations > 0)
    text +=
        ", " + std::to_string(p.probe_iterations) + " iterations in " + format_ms(p.probe_seconds);
  text += p.rent;
  if (!p.pruned.empty()) return text + ": " + p.pruned + ")";
  if (p.converged) return text + ": solved)";
  if (!std::isfinite(p.estimate)) return text + ": residual not falling)";
  return text + ": about " + std::to_string(long(p.predicted_iterations)) + " iterations, " +
         format_ms(remaining(p)) + " left" + (p.trusted ? "" : ", a forecast past its horizon") +
         ")";
}

// fsai:k for k >= 2 (a pattern of A's powers: the one whose set-up can explode, see
// estimate_fsai_setup).
bool fsai_of_a_power(const char* name) {
  const PrecondSpec spec = parse_precond(name);
  return spec.is("fsai") && !spec.argument.empty() && spec.argument != "1";
}

}  // namespace

// ---- set-up estimates made before paying a set-up, and Jacobi's rent ----

FsaiSetupEstimate estimate_fsai_setup(const CsrMatrix<double>& A) {
  const precond::FsaiPatternCount count = precond::count_fsai_pattern(A, 2);
  FsaiSetupEstimate e;
  e.tril_entries = count.tril_entries;
  e.pattern_entries = count.pattern_entries;
  e.longest_row = count.longest_row;
  e.factor_flops = count.factor_flops;
  e.sampled = count.sampled;
  e.seconds = e.factor_flops * kFsaiSecondsPerFlop;
  return e;
}

namespace {
std::string fsai_setup_above(const FsaiSetupEstimate& cost, double seconds) {
  if (cost.seconds < seconds) return "";
  char text[200];
  std::snprintf(text, sizeof text,
                "tril(A^2) has %.0f%s entries, %.1fx tril(A)'s, rows up to %ld: its "
                "factorization's %.2g flops, about ",
                cost.pattern_entries, cost.sampled ? " (sampled)" : "",
                cost.pattern_entries / std::max(cost.tril_entries, 1.0), long(cost.longest_row),
                cost.factor_flops);
  return text + format_ms(cost.seconds) + " of set-up";
}
}  // namespace

std::string fsai_setup_above(const CsrMatrix<double>& A, double seconds) {
  return fsai_setup_above(estimate_fsai_setup(A), seconds);
}

std::string dropped_first_candidate(double left, double jacobi_left, double bound,
                                    double doubt) {
  if (doubt * left < std::min(bound, jacobi_left)) return "";
  const std::string counted =
      doubt == 1 ? "" : " (counted " + std::to_string(int(doubt)) + "x: read from its first runs)";
  return "its forecast, " + format_ms(left) + " left" + counted + ", loses to " +
         (jacobi_left <= bound ? "jacobi's forecast " + format_ms(jacobi_left)
                               : "the best's " + format_ms(bound));
}

std::string amg_not_working(double predicted_iterations, double jacobi_left,
                            bool jacobi_trusted) {
  if (jacobi_trusted || !std::isfinite(jacobi_left) ||
      !(predicted_iterations > kAmgWorkingIterations))
    return "";
  return "its forecast, " + std::to_string(std::lround(predicted_iterations)) +
         " iterations, is AMG not working on this matrix (more than " +
         std::to_string(kAmgWorkingIterations) +
         ": elasticity without its near-nullspace, amg:coords= or nullspace=), against a "
         "Jacobi forecast past its horizon";
}

JacobiRent jacobi_rent(const std::string& candidate, double least_setup, double candidate_setup,
                       double jacobi_ran, double jacobi_remaining, bool trusted) {
  const double factor = trusted ? kTrustedJacobi : kUntrustedJacobi;
  const double believed = jacobi_ran + factor * jacobi_remaining;  // inf: not falling
  const double share = trusted ? 1 : kUntrustedRentShare;
  const double setup_rent = share * candidate_setup;
  JacobiRent rent;
  if (std::min(setup_rent, believed) <= least_setup) {
    rent.seconds = least_setup;
    rent.why = "another candidate's least set-up";
  } else if (!trusted && jacobi_ran + jacobi_remaining > setup_rent) {
    // Its forecast as it is (optimistic, as a few dozen iterations' rate mostly is) ends past
    // the share: running on would only be lost (gen:poisson2d:1000: 175,413 forecast, 1 s).
    rent.seconds = least_setup;
    rent.why = "another candidate's least set-up; its forecast ends past " + candidate +
               "'s share";
  } else if (setup_rent <= believed) {
    rent.seconds = setup_rent;
    char share_text[32];
    std::snprintf(share_text, sizeof share_text, "%gx ", share);
    rent.why = (trusted ? std::string() : std::string(share_text)) + candidate +
               "'s estimated set-up";
  } else {
    rent.seconds = believed;
    rent.why = std::to_string(int(factor)) + "x its forecast";
  }
  return rent;
}

namespace {

// The Jacobi probe that may run on (ski rental): on the solve's own b, set up, not solved, and
// the best candidate so far (or nothing is).
Probe* running_jacobi(std::vector<Probe>& probes, const Probe* best) {
  for (Probe& p : probes)
    if (p.name == "jacobi")
      return p.resumable && p.failure.empty() && p.pruned.empty() && !p.converged &&
                     p.planned.solver && (!best || best == &p)
                 ? &p
                 : nullptr;
  return nullptr;
}

// Jacobi goes on from its x until its runs, its probe's included, have taken `rent.seconds` (at
// its measured time per iteration, within the solve's iteration limit); its forecast, now read
// off the last run, is trusted as after its probe (kJacobiHorizon, against all its iterations).
void run_jacobi_on(Probe& jacobi, const std::vector<double>& b, const JacobiRent& rent,
                   const char* before) {
  const long limit = long(jacobi.planned.solver->plan().cg.max_iters) - jacobi.iterations;
  const double left = rent.seconds - jacobi.run_seconds;
  const long more =
      std::min<long>(limit, long(std::ceil(left / std::max(jacobi.per_iteration, 1e-9))));
  if (left <= 0 || more <= 0) return;
  const double seconds_before = jacobi.run_seconds;
  const long iterations_before = jacobi.iterations;
  if (!run_probe(jacobi, b, more, true)) return;
  const double ran = jacobi.run_seconds - seconds_before;
  jacobi.trusted =
      jacobi.converged || jacobi.predicted_iterations <= kJacobiHorizon * double(jacobi.iterations);
  jacobi.rent += ", " + std::to_string(jacobi.iterations - iterations_before) +
                 " of them run on in " + format_ms(ran) + " before " + before +
                 "'s set-up (up to " + format_ms(rent.seconds) + " in all: " + rent.why + ")";
}

}  // namespace

namespace {

// chol's factor counted once for the whole choice (nothing where A has too many rows to count).
struct CholeskyCount {
  bool counted = false;
  precond::CholeskyEstimate estimate;
};
CholeskyCount count_cholesky(const CsrMatrix<double>& A) {
  CholeskyCount c;
  if (A.rows > kCholeskyCountedRows) return c;
  c.counted = true;
  c.estimate = precond::estimate_cholesky(A);
  return c;
}

// A network's graph (network_graph: mean off-diagonal entries a row, its mean degree, at most
// kNetworkDegree: EPANET's five systems 2.2-2.7, 494_bus 2.4, where a 5-point grid has 3.8-4
// and bcsstk13 41) is near a tree: its AMD factor holds 1.2-1.5x tril(A)'s entries and solves
// in 1-2 iterations for about ic0's set-up, so chol goes first, before Jacobi's probe (which,
// with a second device plan, had cost 1.5-2.8x chol's whole solve there, GPU, BENCHMARKS 10m),
// where its count forecasts a win (network_rule): a tree with few loops has thousands of levels,
// each a wait on a device that synchronises per level (GPU: chol 0.61 s against Jacobi's 0.14 s
// on 30,000 rows). A system of at most kJacobiProbeIterationsGpu rows is not taken for one: CG
// ends within n steps in exact arithmetic, so Jacobi's probe has every chance to solve it, and
// at that size every candidate's time is its fixed cost (LFAT5, 14 rows: Jacobi 0.49 ms, chol
// 0.66, auto with chol first 0.94 on the GPU, BENCHMARKS 10l).

// Why chol is not worth setting up here (empty: it is): too many rows to count, a factor chol
// would refuse, or a forecast (set-up and two solves, its levels included) above `seconds`.
std::string cholesky_not_worth(const CholeskyCount& c, double entries, const ProbeRates& rates,
                               double seconds) {
  if (!c.counted)
    return "more than " + std::to_string(kCholeskyCountedRows) +
           " rows: counting its factor alone costs more than a probe";
  const precond::CholeskyEstimate& e = c.estimate;
  if (!e.refusal.empty()) return e.refusal;
  const CholeskyForecast f = forecast_cholesky(e, entries, rates);
  if (f.seconds < seconds) return "";
  char text[200];
  std::snprintf(text, sizeof text,
                "its factor's %.2g flops (%.1fx tril(A)'s entries), %.0f levels a solve: about ",
                e.flops, e.factor_entries / std::max(e.tril_entries, 1.0), e.levels);
  return text + format_ms(f.setup) + " of set-up and " + format_ms(f.apply) + " an apply";
}

// ---- the rules: which candidates, in which order, and why one is not probed ----

// Jacobi first (its short probe), then the device's order; chol before Jacobi where the
// network rule says so, and AMG after the device's first strong candidate on a network's graph.
std::vector<const char*> candidate_order(bool gpu, bool network, bool chol_first) {
  std::vector<const char*> candidates;
  if (network && gpu) candidates.assign(std::begin(kGpuNetworkCandidates), std::end(kGpuNetworkCandidates));
  if (network && !gpu) candidates.assign(std::begin(kCpuNetworkCandidates), std::end(kCpuNetworkCandidates));
  if (!network && gpu) candidates.assign(std::begin(kGpuCandidates), std::end(kGpuCandidates));
  if (!network && !gpu) candidates.assign(std::begin(kCpuCandidates), std::end(kCpuCandidates));
  if (chol_first) std::rotate(candidates.begin(), candidates.begin() + 1, candidates.begin() + 2);
  return candidates;
}

// What the choice knows so far: the candidates, their probes, the best, what was not tried and
// why, and the set-up estimates made once (for Jacobi's rent and for the candidates' own rules).
struct Choice {
  const SolveRequest& request;
  const CsrMatrix<double>& A;
  Clock::time_point start = Clock::now();
  bool own = false;  // b is the solve's own right-hand side (a probe's x is then its start)
  std::vector<double> b;
  bool gpu = false;
  bool network = false;
  bool chol_first = false;  // network_rule's verdict: chol before Jacobi's probe
  bool good_enough = false;  // Jacobi's forecast is below AMG's set-up: nothing else is probed
  ProbeRates rates;  // the device's, for every forecast made before a set-up
  std::string decisions;  // the rules' reasons that are not one candidate's (the network rule)
  std::vector<const char*> candidates;
  double keep_jacobi_below = 0;
  int jacobi_iterations = 0;  // Jacobi's probe: on the GPU on the solve's b, its rent's least part
  std::vector<Probe> probes;  // capacity for every candidate: `best` points into it
  Probe* best = nullptr;
  std::size_t first_strong = 0;  // index in `probes` of the first candidate probed by time
  std::string not_tried;
  std::optional<CholeskyCount> cholesky;
  std::optional<FsaiSetupEstimate> fsai_cost;

  Choice(const SolveRequest& r, const CsrMatrix<double>& matrix, const std::vector<double>* rhs)
      : request(r), A(matrix) {
    b = probe_rhs(rhs, A.rows, own);
    gpu = request.backend.device == Device::gpu;
    const int threads = request.backend.threads > 0 ? request.backend.threads : omp_get_max_threads();
    rates = probe_rates(request.backend.device, threads, A.rows, double(A.nnz()));
    network = network_graph(A, kJacobiProbeIterationsGpu);
    if (network && rates.per_level == 0) {  // levels cost nothing: chol's own analysis decides
      chol_first = true;
      decisions = "; a network's graph, and a solve's levels cost nothing on the " +
                  rates.measured_on + " here (one thread): chol first, uncounted";
    } else if (network) {  // chol's count decides whether it goes first (network_rule)
      const NetworkRule rule = network_rule(cholesky_count().estimate, A, rates);
      chol_first = rule.chol_first;
      decisions = "; " + rule.why;
    }
    candidates = candidate_order(gpu, network, chol_first);
    probes.reserve(candidates.size());
    keep_jacobi_below = rates.least_setup;
    jacobi_iterations =
        gpu && own && !chol_first ? kJacobiProbeIterationsGpu : kJacobiProbeIterations;
  }
  // On a mesh-like graph chol before AMG where its forecast, its whole solve, is below
  // kCholOverAmg times AMG's estimated set-up, the least AMG costs before its iterations (8-11 on
  // Poisson grids, 68 on a 40x40 grid with jumps over eight decades, 3,680 on elasticity): a
  // small factor solves at once there (the grid's: 10.7 ms against AMG's 7 ms set-up and 74 ms
  // in all); one that fills in costs more (gen:poisson2d:300: AMG 0.36 s in all, chol 2.5 s).
  // Only up to kCountCholBeforeAmg entries: the count is an ordering of A, which on a larger mesh
  // costs about AMG's whole set-up (gen:poisson3d:50: ~1 s, where Jacobi solves in 0.3-0.8 s).
  void order_by_forecast() {
    if (double(A.nnz()) > kCountCholBeforeAmg) return;
    const auto amg = std::find(candidates.begin(), candidates.end(), std::string_view("amg"));
    const auto chol = std::find(candidates.begin(), candidates.end(), std::string_view("chol"));
    if (amg == candidates.end() || chol == candidates.end() || chol < amg) return;
    const double chol_cost = setup_estimate("chol");
    if (chol_cost >= 0 && chol_cost < kCholOverAmg * setup_estimate("amg"))
      std::iter_swap(amg, chol);
  }
  const CholeskyCount& cholesky_count() {
    if (!cholesky) cholesky = count_cholesky(A);
    return *cholesky;
  }
  const FsaiSetupEstimate& fsai_estimate() {
    if (!fsai_cost) fsai_cost = estimate_fsai_setup(A);
    return *fsai_cost;
  }
  // What `name` will cost at least before its first iteration, as far as it is estimated (0:
  // not estimated); negative where it is not set up whatever Jacobi does (chol that would
  // refuse).
  double setup_estimate(const char* name) {
    if (std::string(name) == "chol") {
      const CholeskyCount& c = cholesky_count();
      return c.counted && c.estimate.refusal.empty()
                 ? forecast_cholesky(c.estimate, double(A.nnz()), rates).seconds
                 : -1.0;
    }
    if (std::string(name) == "amg") return estimate_amg_setup(A, rates).seconds;
    return fsai_of_a_power(name) ? fsai_estimate().seconds : 0.0;
  }
  void skip(const char* name, const std::string& why) {
    not_tried += std::string("; ") + name + " (not tried: " + why + ")";
  }
  bool solved() const { return best && best->converged && own; }
};

// What a candidate's probe may spend besides its set-up: a share of the best estimate, less
// what probing has cost beyond the best candidate's set-up and the run the solve continues;
// unbounded for the first candidate after Jacobi, or before any estimate.
double probe_budget(const Choice& c) {
  const double inf = std::numeric_limits<double>::infinity();
  const Probe* best = c.best;
  const double elapsed = std::chrono::duration<double>(Clock::now() - c.start).count();
  const double useful = best ? best->setup_seconds + (best->resumable ? best->run_seconds : 0) : 0;
  const bool first = c.probes.size() == c.first_strong;
  return best && !first ? std::max(kMinBudget, kBudgetShare * best->estimate) - (elapsed - useful)
                        : inf;
}

// Why candidate `name` (not Jacobi) is not probed, in the order the rules are asked; empty: it
// is probed. The best has solved the system; Jacobi is about to; the first strong candidate
// will finish before probing could pay; the budget is spent; fsai:2's, AMG's or chol's estimated
// set-up alone (chol's: with its two solves) costs more than the best's remaining time (an
// untrusted one as far as it is believed).
std::string why_not_probed(Choice& c, const char* name, double budget) {
  const Probe* best = c.best;
  const double inf = std::numeric_limits<double>::infinity();
  if (c.solved()) return best->name + "'s probe solved the system";
  if (best && best->name == "jacobi" && best->trusted &&
      remaining(*best) <= std::max(c.keep_jacobi_below, best->setup_seconds))
    return "jacobi has about " + format_ms(remaining(*best)) +
           " left, less than another candidate's set-up";
  // Good enough: on a mesh-like graph, a Jacobi forecast to finish before AMG's set-up would
  // leaves nothing that probing another could save (ic0's first 20 iterations alone took 3.2 s
  // on gen:poisson3d:50 under load, where Jacobi needed 0.3-0.6 s in all).
  if (best && c.good_enough && best->name == "jacobi")
    return "jacobi has about " + format_ms(remaining(*best)) +
           " left, less than amg's estimated set-up: probing another cannot pay";
  // (chol's forecast is its whole solve, held against the best's remaining time below.)
  const bool chol = std::string(name) == "chol";
  if (!chol && best && c.probes.size() > c.first_strong && best == &c.probes[c.first_strong] &&
      remaining(*best) < kProbeOthersAbove)
    return best->name + " has about " + format_ms(remaining(*best)) +
           " left, less than probing could save";
  // chol's forecast is its whole solve, not a probe's: held against the best's remaining time
  // below, not against the probing budget.
  if (budget <= 0 && !chol)
    return "the probe's budget, " + format_ms(std::max(kMinBudget, kBudgetShare * best->estimate)) +
           ", is spent";
  if (best && fsai_of_a_power(name)) {
    const std::string too_costly = fsai_setup_above(
        c.fsai_estimate(), remaining(*best) * (best->trusted ? 1 : kUntrustedJacobi));
    if (!too_costly.empty())
      return too_costly + ", above " + best->name + "'s remaining " + format_ms(remaining(*best)) +
             (best->trusted ? "" : " x " + std::to_string(int(kUntrustedJacobi)));
  }
  // AMG's estimated set-up against the best's remaining time, an untrusted forecast (Jacobi's)
  // taken as it is: at the host's rates AMG's set-up costs ~270 Jacobi iterations (4e-7 against
  // 1.5e-9 s an entry), so Jacobi goes on where it forecasts fewer (gen:poisson3d:50: 161 left,
  // Jacobi 0.29 s against AMG's 0.77 s) and AMG is built where more (gen:poisson2d:1000: 652).
  if (best && std::string(name) == "amg") {
    const AmgSetupEstimate amg = estimate_amg_setup(c.A, c.rates);
    if (amg.seconds >= remaining(*best)) {
      c.good_enough = best->name == "jacobi" && !c.network;
      return describe(amg, c.rates) + ", above " + best->name + "'s remaining " +
             format_ms(remaining(*best));
    }
  }
  if (std::string(name) == "chol" && !c.chol_first) {
    const double limit = best ? bound(best) : inf;
    const std::string not_worth =
        cholesky_not_worth(c.cholesky_count(), double(c.A.nnz()), c.rates, limit);
    if (!not_worth.empty())
      return not_worth + (best && limit < inf
                              ? ", against " + best->name + "'s remaining " + format_ms(limit)
                              : "");
  }
  return "";
}

// ---- the probe loop ----

// Jacobi's short probe, unless the best so far (chol, on a network) solved the system.
void probe_jacobi_first(Choice& c) {
  if (c.solved()) {
    c.skip("jacobi", c.best->name + "'s probe solved the system");
    return;
  }
  c.probes.push_back(probe_jacobi(c.request, c.A, c.b, c.own, c.jacobi_iterations));
  const Probe& jacobi = c.probes.back();
  if (jacobi.failure.empty() && jacobi.iterations > 0) {  // the rates as this machine runs now
    double factor = 1;
    c.rates = calibrated(c.rates, jacobi.per_iteration, double(c.A.nnz()), factor);
    char text[120];
    std::snprintf(text, sizeof text, "; the %s's rates x %.2g (Jacobi's iterations ran at that)",
                  c.rates.measured_on.c_str(), factor);
    c.decisions += text;
  }
  if (!c.best && usable(c.probes.back()))
    c.best = &c.probes.back();
  else if (c.best)  // after chol's probe (a sparse factor goes first)
    c.best = pick_best(c.probes);
  c.first_strong = c.probes.size();
  // AMG or chol next: decided only now that Jacobi has not solved the system (chol's count is an
  // ordering of A, as costly as Jacobi's whole solve on a small matrix: gr_900_900_crg).
  if (!c.network && !c.solved()) c.order_by_forecast();
}

// Ski rental (jacobi_rent): a running Jacobi goes on from its x before `name`'s set-up is paid;
// where that solves the system, this candidate and the rest are not tried. Its least part
// first, which needs no estimate (chol's count costs a little too).
void rent_jacobi_before(Choice& c, const char* name) {
  Probe* jacobi = c.own && !c.good_enough ? running_jacobi(c.probes, c.best) : nullptr;
  if (!jacobi) return;  // (good enough: nothing else is set up, Jacobi's solve goes on anyway)
  const double least = std::max(c.keep_jacobi_below, jacobi->setup_seconds);
  const double none = 0, not_falling = std::numeric_limits<double>::infinity();
  run_jacobi_on(*jacobi, c.b, jacobi_rent(name, least, none, 0, not_falling, false), name);
  const double candidate_setup = running_jacobi(c.probes, c.best) ? c.setup_estimate(name) : 0;
  if (candidate_setup > least)
    run_jacobi_on(*jacobi, c.b,
                  jacobi_rent(name, least, candidate_setup, jacobi->run_seconds, remaining(*jacobi),
                              jacobi->trusted),
                  name);
  c.best = pick_best(c.probes);
}

// Candidate `name` set up and probed within `budget`, bounded by the best so far.
void probe_candidate(Choice& c, const char* name, double budget) {
  const bool first = c.probes.size() == c.first_strong;
  JacobiFigures jacobi;
  for (const Probe& p : c.probes)
    if (p.name == "jacobi" && p.failure.empty()) {
      jacobi.per_iteration = p.per_iteration;
      jacobi.trusted = p.trusted;
      if (std::isfinite(p.estimate)) jacobi.remaining = remaining(p);
    }
  // chol's forecast is its whole solve: held against the best's remaining time, not a budget.
  const double limit = std::string(name) == "chol" ? std::numeric_limits<double>::infinity() : budget;
  c.probes.push_back(
      probe(c.request, c.A, name, c.b, bound(c.best), limit, c.own, c.own && first, jacobi));
  c.best = pick_best(c.probes);
}

void run_probes(Choice& c) {
  std::string stop;  // why the candidates left are not probed
  for (const char* name : c.candidates) {
    if (!stop.empty()) {
      c.skip(name, stop);
      continue;
    }
    if (std::string(name) == "jacobi") {
      probe_jacobi_first(c);
      continue;
    }
    rent_jacobi_before(c, name);
    const double budget = probe_budget(c);
    const std::string why_not = why_not_probed(c, name, budget);
    if (why_not.empty())
      probe_candidate(c, name, budget);
    else
      c.skip(name, why_not);
    // AMG not working beside a doubtful Jacobi forecast is an elasticity-like matrix, where
    // Jacobi's forecast was 20x its need and chol's factor of the 3-D mesh costs 10x Jacobi's
    // solve (gen:elasticity3d:12, serial: 3.8 s against 0.32 s): Jacobi solves.
    if (!c.probes.empty() && c.probes.back().not_working)
      stop = "amg does not work on this matrix and jacobi's forecast is past its horizon: "
             "jacobi solves";
  }
}

// The winner's solver, as probed, with why it won, what each probe cost and, where the solve
// goes on from the winner's probe, its x as the solve's start.
PlannedSolver chosen_solver(Choice& c) {
  Probe* best = c.best;
  std::string why;
  if (best) {
    why = best->name + ": about " + std::to_string(long(best->predicted_iterations)) +
          " iterations x " + format_ms(best->per_iteration) + " + set-up " +
          format_ms(best->setup_seconds) + " = " + format_ms(best->estimate);
  } else {  // nothing to extrapolate: the lowest residual reached, never a refusal
    for (Probe& p : c.probes)
      if (p.failure.empty() && p.planned.solver && (!best || p.reached < best->reached)) best = &p;
    if (!best) throw InputError("--precond auto: no candidate could be set up on this matrix");
    char reached[32];
    std::snprintf(reached, sizeof reached, "%.1e", best->reached);
    why = best->name + ": no candidate's residual fell steadily in its probe; this one reached " +
          reached + " of ||b||, the lowest";
  }
  why += "; tried:";
  for (const Probe& p : c.probes) why += " " + describe(p) + (&p == &c.probes.back() ? "" : ",");
  why += c.not_tried;
  why += c.decisions;
  PlannedSolver chosen = std::move(best->planned);
  const double spent = std::chrono::duration<double>(Clock::now() - c.start).count();
  why += "; probing " + std::to_string(c.probes.size()) + " of " +
         std::to_string(c.candidates.size()) + " candidates (jacobi for " +
         std::to_string(c.jacobi_iterations) + " iterations, " +
         (c.own ? "the first of the others for up to " +
                      format_ms(c.request.auto_first_probe_seconds) + ", the rest at most "
                : std::string("the others at most ")) +
         std::to_string(kProbeIterations) + " iterations each, on " +
         (c.own ? "the solve's right-hand side" : "a random right-hand side") + ") cost " +
         format_ms(spent);
  if (best->resumable && !best->x.empty()) {  // the solve goes on from the winner's probe's x
    chosen.warm_start = std::move(best->x);
    chosen.warm_start_iterations = best->iterations;
    chosen.warm_start_seconds = best->run_seconds;
    why += ", " + std::to_string(best->iterations) + " iterations of it (" +
           format_ms(best->run_seconds) + ") kept as the solve's start";
  }
  chosen.inspect_seconds += spent - best->setup_seconds;  // the winner's set-up is the solve's
  const std::string format_choice = chosen.solver->plan().inspection;  // --format auto's
  chosen.solver->note_inspection("preconditioner " + why +
                                 (format_choice.empty() ? "" : "; format " + format_choice));
  return chosen;
}

}  // namespace

PlannedSolver choose_preconditioner(const SolveRequest& request, const CsrMatrix<double>& A,
                                    const std::vector<double>* rhs) {
  Choice c(request, A, rhs);
  run_probes(c);
  return chosen_solver(c);
}

}  // namespace cgs
