// The plan of a scenario study: which engine runs the scenarios and where, where their trials
// start, how many run at once and on how many threads -- every choice made by make_study_plan from
// what was asked (StudyRunRequest, netsolve's --device, --study-batch, --batch-engine, --solver,
// --start, --threads) and the network, each with a sentence of why, as solver/plan.hpp's Plan is
// for one solve. netsolve prints it in the study's summary and its JSON report.
//
//   host              every thread runs scenario after scenario with its own copy of the
//                     baseline's analysed solver (study.hpp);
//   batched CG        the scenarios in lockstep, their CG solves batched (batch_cg.hpp): the
//                     cluster CG on the GPU, a loop of cgsolve's CG on the host;
//   batched Cholesky  the same with EPANET's factorisation compiled once and run for the batch;
//   trials            every scenario's trials on the trials engine (trial_batch.hpp), the host
//                     threads only preparing starts and reading rows.
//
// The start is the one choice the plan cannot finish alone: --start auto probes a few scenarios
// both ways after the baseline ran (study.cpp's probe_start), and a warm start needs the
// baseline solved; run_study records what it decided in the plan it returns.
#pragma once

#include <string>
#include <vector>

#include "network/linear_solver.hpp"
#include "network/network.hpp"
#include "solver/solver.hpp"

namespace cgs::net {

enum class StudyEngine { host, batched_cg, batched_cholesky, trials };
enum class StudyStart { warm, cold, probe };  // probe: --start auto, decided by probe scenarios
// --batch-engine: what a batched study solves each trial with (auto: the plan chooses). cg: CG
// preconditioned by EPANET's factor on the trials engine where the study fits it (and --precond
// is auto, the network rule), else the batched CG's members.
enum class BatchEngineChoice { automatic, cholesky, cg, trials };
// The linear solver of the scenarios' trials (--solver, --direct-backend, --elimination-order):
// the trials engine runs EPANET's factor only: the native direct solver in EPANET's order, or CG
// preconditioned by that factor (--solver cg with --precond auto).
enum class StudySolver { native_direct, other_direct, cg };

std::string to_string(StudyEngine engine);
std::string to_string(StudyStart start);

inline constexpr int kDefaultStartProbes = 8;

// How a study was asked to run.
struct StudyRunRequest {
  int threads = 0;  // host threads; 0: every core
  StudyStart start = StudyStart::warm;
  bool start_by_default = false;           // start is the caller's default, not asked for
  int start_probes = kDefaultStartProbes;  // StudyStart::probe: the probe scenarios
  bool gpu = false;                        // --device gpu: the batched engines on the GPU
  // --device auto: the plan takes the GPU where the trials engine takes the study and its
  // forecast beats the host threads' (forecast_study_devices); gpu_absent: why no GPU can be
  // taken (empty: one is present).
  bool device_auto = false;
  std::string gpu_absent;
  int batch =
      0;  // --study-batch: scenarios in flight, or a call of the trials engine; 0: not asked
  BatchEngineChoice batch_engine = BatchEngineChoice::automatic;
  StudySolver solver = StudySolver::native_direct;
  SolveRequest cg;               // the batched CG engine's request (netsolve --solver cg's)
  RefinementOptions refinement;  // its members' refinement
  // Trials a scenario may take on the trials engine before it goes to the host
  // (trial_kernels.hpp's Options::trial_budget); < 0: the baseline's trials and half again, at
  // least 3 more; 0: none.
  int trial_budget = -1;
};

// What the study is, as far as the plan needs it.
struct StudyScope {
  int scenarios = 0;
  long duration = 0;            // seconds, resolved (0: the steady state)
  bool available_flow = false;  // fire flow with --residual-pressure: a search per scenario
};

// Scenarios in flight in a batched study unless asked: a cluster of 1-4 blocks per system lets
// a GPU of 132 SMs run 33-132 systems at once; 128 keeps the launches full while scenarios that
// converged early are replaced.
inline constexpr int kDefaultBatchSize = 128;
// The same for the batched Cholesky, in two groups (one on the device while the other's threads
// run their trials): one GPU thread a system, so a launch wants many systems, but each is a host
// thread with its own network copy and workspace, whose set-up (EPANET's ordering among it) costs
// 20-60 ms of a core on BWSN_Network_2. Measured there (3,000 fire flows, BENCHMARKS
// §19d): 512 in flight 377 scenarios/s (set-up 1.3 s), 1,024 553/s (2.2 s), 2,048 613/s (4.8 s):
// 1,024 gives the most with its set-up counted.
inline constexpr int kDefaultDirectBatchSize = 1024;

// What will run. Nothing in it says "auto" once run_study has decided the start.
struct StudyPlan {
  StudyEngine engine = StudyEngine::host;
  bool gpu = false;  // the batched or trials engine on the GPU (the baseline runs on the host)
  StudyStart start = StudyStart::warm;  // probe until run_study decides
  int start_probes = 0;                 // StudyStart::probe
  // Batched engines: scenarios in flight (one host thread each), in `groups` rendezvous. Trials:
  // scenarios a call (0: as many as the engine holds, known once it is made).
  int batch = 0;
  int groups = 1;
  int threads = 1;        // the threads that run the scenarios (batched: one a scenario in flight)
  int trial_budget = -1;  // trials: resolved from the baseline's trials by run_study
  SolveRequest cg;        // batched CG: the engine's request and its members' refinement
  RefinementOptions refinement;
  std::string trials_declined;  // why the trials engine, asked for, does not run this study
  // The trials engine's linear solve: CG preconditioned by EPANET's factor from its answer
  // (trial_pcg.hpp), as --solver cg's network rule; false: the factor's answer (the direct path).
  bool trials_cg = false;
  // "engine: batched Cholesky on the host (--study-batch 64 with the direct solver)", one line
  // for each of engine, start, batch, threads.
  std::vector<std::string> reasons;

  bool batched() const {
    return engine == StudyEngine::batched_cg || engine == StudyEngine::batched_cholesky;
  }
  bool warm() const { return start == StudyStart::warm; }
  // The reason of `key` ("engine", "start", ...) without its key, or empty.
  std::string reason(const std::string& key) const;
  // Replaces the reason of `key` (adds it where there is none).
  void set_reason(const std::string& key, const std::string& why);
  // One line: "batched Cholesky on the GPU, 1024 in flight in 2 groups, warm start".
  std::string summary() const;
};

// The plan for a study of `scope` on `net` asked as `request`. Throws InputError where the
// request contradicts itself (--batch-engine trials with a solver other than the native direct).
StudyPlan make_study_plan(const StudyRunRequest& request, const Network& net,
                          const StudyScope& scope);

// --device auto's forecast of a steady-state study's scenario loop, seconds: `threads` host
// threads, or the trials engine on the GPU with its fixed start (the rates measured on an H200
// and its 16-core host: BENCHMARKS.md §30).
struct StudyDeviceForecast {
  double host = 0, gpu = 0;
};
StudyDeviceForecast forecast_study_devices(int junctions, int scenarios, int threads);

// Threads for `scenarios` scenarios when `asked` were asked (0: every core), at least 1.
int study_threads(int asked, std::size_t scenarios);

}  // namespace cgs::net
