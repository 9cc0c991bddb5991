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
#include "network/study_plan.hpp"

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

inline constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

// How close a probe scenario's warm and cold rows must be for --start auto to keep the warm start
// (relative, above 1 in the pressure units): a tenth of the 1e-3 the rows are held to against
// EPANET, whose answers are its cold path's.
inline constexpr double kStartProbeTolerance = 1e-4;

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

struct StudyOptions {
  StudySpec spec;
  std::vector<int> elements;      // empty: every junction (fire flow) or every pipe (closure)
  double fire_flow = 0;           // cfs, added to the junction's first demand category
  long duration = 0;              // seconds; 0 the steady state, < 0 the file's DURATION
  double pressure_threshold = 0;  // the file's pressure units: junctions below it are counted
  // Fire flow: the flow available at this residual pressure (the file's pressure units) at the
  // hydrant, searched for per scenario; < 0: not asked (available_flow stays NaN).
  double residual_pressure = -1;
  // How it runs: engine, device, start, batch, threads (make_study_plan turns it into the
  // StudyPlan that StudyResults::plan reports). Where the trials engine runs a study, scenarios it
  // hands back (trial_kernels.hpp: error 110, unbalanced) run on the host engine; the baseline
  // always runs on the host, on make_solver's solver.
  StudyRunRequest run;
  // One shard of the study (mpirun: a shard a rank): only its scenarios run, those whose index
  // i (scenario i + 1) has i % shards == shard; StudyResults::scenarios then holds them alone,
  // with their own scenario numbers. The baseline and the start's probes are the whole study's,
  // so every shard decides as one process would and its rows are that process's.
  int shard = 0, shards = 1;
  // Rows already done (netsolve resuming a study from its checkpoint): those scenarios do not
  // run again; their rows join StudyResults::scenarios as they are.
  std::vector<ScenarioResult> done;
  // After each scenario, its row (serialised by the engine, before on_progress): the checkpoint.
  std::function<void(const ScenarioResult&)> on_row;
  // After each scenario, from the thread that ran it (serialised by the engine).
  std::function<void(int done, int total, int failed)> on_progress;
};


struct StudyResults {
  ScenarioResult baseline;
  std::vector<ScenarioResult> scenarios;
  StudyPlan plan;               // what ran, the start as decided after the baseline
  double setup_seconds = 0;     // baseline run and the threads' workspaces and solver copies
  double scenario_seconds = 0;  // the scenarios, wall clock
  std::string solver_name;
  int analyses = -1;  // symbolic analyses over all solvers of the study (-1: not counted)
  BatchRendezvous::Counts batch;  // the batched engine's batches (launches 0: not batched)
  // The trials engine: its calls, their kernels' and whole calls' time, the scenarios it handed
  // back to the host.
  int trial_calls = 0, host_scenarios = 0;
  double trial_kernel_ms = 0, trial_call_ms = 0;
  // With CG as its linear solve (StudyPlan::trials_cg): the trials whose factor's answer CG
  // corrected, and the iterations that took, over the scenarios it finished.
  long trial_corrections = 0, trial_cg_iterations = 0;
  int shards = 1;  // mpirun: the ranks whose rows merge_shards gathered here
  int resumed = 0;  // rows taken from StudyOptions::done (a resumed study), not run again
  int cold_resolves = 0;  // warm-started scenarios that ended unbalanced or failed, run again cold
  int failed() const;
};

// Runs the baseline, then every scenario, as make_study_plan(options.run, ...) plans it.
// make_solver makes the baseline's solver; the host threads' solvers are copies of it once
// analysed (LinearSolver::clone_analysed), or new ones from make_solver where it cannot be
// copied; the batched engines' members hand their systems to the engine instead.
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

// One row as a line of text and back, exactly (doubles in hexadecimal): a study's checkpoint.
// read_scenario_rows stops at the first line that does not parse whole (a run killed while
// writing it) and says how many bytes it read.
std::string scenario_row_text(const ScenarioResult& r);
std::vector<ScenarioResult> read_scenario_rows(const std::string& text, std::size_t* bytes_read);

// A shard's rows and counts as text and back, exactly: how the ranks of an mpirun study send
// theirs to rank 0 (merge_shards).
std::string shard_text(const StudyResults& r);
// Rank 0's results with every shard's rows (texts from shard_text, its own among them) in
// scenario order and their counts summed. std::runtime_error on a text that does not parse.
void merge_shards(StudyResults& r, const std::vector<std::string>& texts);

}  // namespace cgs::net
