// Scenario studies: one network run many times with one change each, in one process, spread over
// the CPU cores (netsolve --study; network/README.md, "Scenario studies").
//   fireflow   one scenario per junction (or listed junction): a fire flow added to the base of its
//              first demand category, as epanet-scenarios' EN_BASEDEMAND (so it follows that
//              category's pattern and the DEMAND MULTIPLIER in an extended-period run);
//   closure    one scenario per pipe (or listed pipe), closed for the whole run (initial status);
//   demand     N draws of independent per-junction demand multipliers, lognormal with mean 1 and
//              coefficient of variation cv, each draw's generator seeded by (seed, draw index).
// The engine is built for batches: the baseline run analyses the linear solver once (ordering,
// symbolic factorisation); every thread gets a copy of that analysed solver, its own copy of the
// network and one SimulationWorkspace (graph, matrix structure, rules), and runs scenario after
// scenario on them, each from the initial state with the baseline's time-0 flows as the starting
// point (warm start). Memory and set-up grow with the threads, not with the scenarios; a
// scenario's result depends on the scenario only, so the rows are the same for any thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "network/batch_cg.hpp"
#include "network/linear_solver.hpp"
#include "network/network.hpp"
#include "network/trial_batch.hpp"

namespace cgs::net {

enum class StudyKind { fireflow, closure, demand };

struct StudySpec {
  StudyKind kind = StudyKind::fireflow;
  int draws = 0;           // demand: the number of scenarios
  double cv = 0.1;         // demand: coefficient of variation of each multiplier
  std::uint64_t seed = 1;  // demand
};

// "fireflow", "closure", "demand:N[:cv[:seed]]" (N >= 1, cv >= 0). Throws InputError naming
// --study and what is wrong.
StudySpec parse_study(const std::string& text);
std::string to_string(StudyKind kind);

// --elements FILE: one ID a line (blank lines and ';' comments skipped): junctions for fire flow,
// pipes for closure. An unknown ID, or one of another kind, is an InputError naming the file and
// line. Returns node or link indices in the file's order.
std::vector<int> read_study_elements(const std::string& path, const Network& net, StudyKind kind);

// The demand multipliers of draw `index` (one per junction): lognormal, mean 1, coefficient of
// variation cv (sigma^2 = ln(1 + cv^2), mu = -sigma^2 / 2), normals by Box-Muller from a
// std::mt19937_64 seeded with seed_seq{seed, index}: the same numbers on every platform and for
// any thread count.
std::vector<double> demand_multipliers(std::uint64_t seed, int index, int junctions, double cv);

struct StudyOptions {
  StudySpec spec;
  std::vector<int> elements;      // empty: every junction (fire flow) or every pipe (closure)
  double fire_flow = 0;           // cfs, added to the junction's first demand category
  long duration = 0;              // seconds; 0 the steady state, < 0 the file's DURATION
  double pressure_threshold = 0;  // the file's pressure units: junctions below it are counted
  // Fire flow: the flow available at this residual pressure (the file's pressure units) at the
  // hydrant, searched for per scenario; < 0: not asked (available_flow stays NaN).
  double residual_pressure = -1;
  int threads = 0;         // 0: every core
  bool warm_start = true;  // false: EPANET's initial flows for every scenario (as EN_INITFLOW)
  // Choose between the warm start and EPANET's own (cold) start with this many probe scenarios
  // (netsolve --start auto): spread over the study, each run both ways on the baseline's runner;
  // warm is kept where every probe's row agrees within kStartProbeTolerance and it takes at least
  // 10% fewer trials, else cold (StudyResults::start_note says which and why). 0: warm_start as
  // given. Only where warm_start is true and the baseline solved.
  int start_probe = 0;
  // The batched engine (batch_cg.hpp; netsolve --device gpu): set, the scenarios run in lockstep,
  // batch_size of them at a time, each on its own thread with a CG solver whose inner solves are
  // batched on this engine (made once, before the scenarios; DeviceError where it cannot run).
  // The baseline still runs on make_solver's solver, so the warm start is the CPU study's.
  std::function<std::unique_ptr<BatchCg>()> batch_engine;
  int batch_size = 0;            // scenarios in flight; 0: kDefaultBatchSize
  RefinementOptions refinement;  // the batched CG solvers' (as netsolve --solver cg's)
  // The members are direct solvers (make_batch_direct_member_solver) for a batched Cholesky
  // engine (make_*_batch_cholesky) instead of CG solvers.
  bool batch_direct = false;
  // The trials engine (trial_batch.hpp): set, a steady-state study runs every scenario's trials
  // there (on the GPU for netsolve --device gpu), the host threads only preparing each scenario's
  // start and reading its row, chunk after chunk. Scenarios it hands back (trial_kernels.hpp:
  // error 110, unbalanced) and studies it cannot run (StudyResults::engine_note says why) run on
  // the host engine as without it. The baseline always runs on the host.
  std::function<std::unique_ptr<BatchTrials>(const TrialNetwork&)> trial_engine;
  int trial_chunk = 0;  // scenarios a call of the trials engine; 0: as many as fit
  // Trials a scenario may take on the engine before it goes to the host (trial_kernels.hpp's
  // Options::trial_budget); < 0: the baseline's trials and half again, at least 3 more; 0: none.
  int trial_budget = -1;
  // After each scenario, from the thread that ran it (serialised by the engine).
  std::function<void(int done, int total, int failed)> on_progress;
};

// Scenarios in flight in a batched study unless asked: on an H100, a cluster of 1-4 blocks per
// system lets 33-132 systems run at once; 128 keeps the launches full while scenarios that
// converged early are replaced.
inline constexpr int kDefaultBatchSize = 128;
// The same for the batched Cholesky, in two groups (one on the device while the other's threads
// run their trials): one GPU thread a system, so a launch wants many systems, but each is a host
// thread with its own network copy and workspace, whose set-up (EPANET's ordering among it) costs
// 20-60 ms of a core on BWSN_Network_2. Measured there (H100 host, 3,000 fire flows, BENCHMARKS
// §19d): 512 in flight 377 scenarios/s (set-up 1.3 s), 1,024 553/s (2.2 s), 2,048 613/s (4.8 s):
// 1,024 gives the most with its set-up counted.
inline constexpr int kDefaultDirectBatchSize = 1024;

inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

// How close a probe scenario's warm and cold rows must be for --start auto to keep the warm start
// (relative, above 1 in the pressure units): a tenth of the 1e-3 the rows are held to against
// EPANET, whose answers are its cold path's.
inline constexpr double kStartProbeTolerance = 1e-4;
inline constexpr int kDefaultStartProbes = 8;

// One row of the study. Pressures in the file's units, taken over the junctions at every
// hydraulic step that was solved, as epanet-scenarios takes them.
struct ScenarioResult {
  int scenario = 0;    // 0: the baseline (the unmodified network)
  int element = -1;    // node (fire flow) or link (closure) index; -1 for the baseline and draws
  bool ok = false;     // every period solved (EPANET's error 110 or a failed CG solve: not ok)
  std::string reason;  // why not ok; or a warning (unbalanced periods) when ok
  int trials = 0;      // gradient-algorithm trials over the periods solved (EPANET's iterations)
  int periods = 0;     // hydraulic steps solved
  double min_pressure = kNotMeasured;
  int min_node = -1;
  double element_pressure = kNotMeasured;  // fire flow: the junction's, at the last step solved
  int below_threshold = 0;  // junctions whose pressure fell below the threshold at some step
  // Junctions joined to no reservoir or tank through open links at some step: their pressures
  // are set by closed links' 1e-8 couplings (DDA: demand pushed through them, -1e5 psi and
  // lower), not by the network, and differ between solvers and trial paths.
  int cut_off = 0;
  bool min_cut_off = false;  // min_node was one of them at the step of the lowest pressure
  // Pressure-driven demand: the share of the junctions' demand not delivered, in %, at the step
  // where it was largest (EPANET's DemandReduction); 0 with demand-driven demands.
  double demand_deficit = 0;
  double available_flow = kNotMeasured;  // fire flow with a residual pressure: the file's units
  int available_flow_runs = 0;           // runs the search for it took
};

struct StudyResults {
  ScenarioResult baseline;
  std::vector<ScenarioResult> scenarios;
  int threads = 1;
  double setup_seconds = 0;     // baseline run and the threads' workspaces and solver copies
  double scenario_seconds = 0;  // the scenarios, wall clock
  std::string solver_name;
  int analyses = -1;  // symbolic analyses over all solvers of the study (-1: not counted)
  BatchRendezvous::Counts batch;  // the batched engine's batches (launches 0: not batched)
  bool warm_start = false;        // the start the scenarios ran from
  std::string start_note;         // StudyOptions::start_probe's choice and why (empty: none)
  // The trials engine: its calls, their kernels' and whole calls' time, the scenarios it handed
  // back to the host; or why the study did not run on it (empty when it did, or was not asked).
  int trial_calls = 0, host_scenarios = 0;
  double trial_kernel_ms = 0, trial_call_ms = 0;
  std::string engine_note;
  int failed() const;
};

// Runs the baseline, then every scenario. make_solver makes the baseline's solver; the threads'
// solvers are copies of it once analysed (LinearSolver::clone_analysed), or new ones from
// make_solver where it cannot be copied; with options.batch_engine, batched CG solvers instead.
// Throws InputError for a network that cannot be studied (no junction or pipe to study, a listed
// element of the wrong kind).
StudyResults run_study(const Network& net,
                       const std::function<std::unique_ptr<LinearSolver>()>& make_solver,
                       const StudyOptions& options);

// The study CSV: scenario,element,ok,iterations,min_pressure,min_node,element_pressure (the
// columns of epanet-scenarios' CSV, same formats), then below_threshold,cut_off,min_cut_off,
// deficit_pct,available_flow,reason. Row 0 is the baseline. Written whole or not at all.
void write_study_csv(const std::string& path, const Network& net, const StudyResults& results,
                     const StudyOptions& options);
std::string study_element_name(const Network& net, StudyKind kind, const ScenarioResult& r);

}  // namespace cgs::net
