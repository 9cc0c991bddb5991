// The plan of a scenario study (study_plan.hpp): engine, device, start, batch and threads, each
// with its reason.
#include "network/study_plan.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <thread>

#include "base/input_error.hpp"
#include "network/trial_batch.hpp"

namespace cgs::net {
namespace {

std::string device_name(bool gpu) { return gpu ? "the GPU" : "the host"; }

// Why this study cannot run on the trials engine, or empty.
std::string trials_limits(const Network& net, const StudyScope& scope) {
  if (scope.duration != 0) return "it runs steady-state studies only (--duration 0)";
  if (scope.available_flow) return "the available-flow search runs on the host";
  return trial_engine_limits(net);
}

// CG on the trials engine: CG preconditioned by EPANET's factor (--precond auto's network rule),
// asked by --solver cg or by --batch-engine cg beside the native direct solver.
bool factor_cg(const StudyRunRequest& r) {
  if (!r.cg.precond.is("auto")) return false;
  return r.solver == StudySolver::cg ||
         (r.batch_engine == BatchEngineChoice::cg && r.solver == StudySolver::native_direct);
}

// The engine and its reason. A batched engine is asked for by --device gpu, --study-batch or
// --batch-engine trials|cg; --batch-engine auto then takes the trials engine on the GPU with
// EPANET's factor (the native direct solver, or CG preconditioned by it), the batched CG with
// --solver cg and another preconditioner, else the batched Cholesky. --batch-engine cg takes
// the trials engine with CG where the study fits it: every trial on the device, against the
// batched CG's members, which run their trials on the host and their CG without the factor.
void choose_engine(const StudyRunRequest& r, const Network& net, const StudyScope& scope,
                   StudyPlan& plan) {
  const bool native = r.solver == StudySolver::native_direct;
  const bool with_cg = factor_cg(r);
  if (r.batch_engine == BatchEngineChoice::trials && !native && !with_cg)
    throw InputError(
        "--batch-engine trials runs EPANET's factor: the native direct solver in EPANET's order, "
        "or --solver cg with --precond auto (not another --precond, --direct-solver "
        "cholmod|eigen or --elimination-order)");
  const bool cg_engine = r.batch_engine == BatchEngineChoice::cg;
  const bool batched =
      r.gpu || r.batch > 0 || r.batch_engine == BatchEngineChoice::trials || cg_engine;
  if (!batched) {
    plan.engine = StudyEngine::host;
    plan.reasons.push_back(
        "engine: host (neither --device gpu nor --study-batch: each thread runs its scenarios "
        "with a copy of the baseline's analysed solver)");
    return;
  }
  plan.gpu = r.gpu;
  const bool automatic = r.batch_engine == BatchEngineChoice::automatic;
  const std::string where = " on " + device_name(r.gpu);
  const std::string asked = !r.gpu          ? "--study-batch"
                            : r.device_auto ? "--device auto"
                                            : "--device gpu";
  if (r.batch_engine == BatchEngineChoice::trials || (cg_engine && with_cg) ||
      (automatic && r.gpu && (native || with_cg))) {
    plan.trials_declined = trials_limits(net, scope);
    if (plan.trials_declined.empty()) {
      plan.engine = StudyEngine::trials;
      plan.trials_cg = with_cg;
      const std::string solve =
          with_cg ? "CG preconditioned by EPANET's factor, from its answer" : "EPANET's factor";
      plan.reasons.push_back("engine: trials" + where + ", each trial's system by " + solve + " (" +
                             (automatic
                                  ? asked + ": every trial on the engine"
                                  : "--batch-engine " + std::string(cg_engine ? "cg" : "trials")) +
                             ")");
      return;
    }
    plan.engine = with_cg || cg_engine ? StudyEngine::batched_cg : StudyEngine::batched_cholesky;
    plan.reasons.push_back("engine: " + to_string(plan.engine) + where +
                           " (the trials engine declined: " + plan.trials_declined + ")");
    return;
  }
  if (r.batch_engine == BatchEngineChoice::cholesky || (automatic && r.solver != StudySolver::cg)) {
    plan.engine = StudyEngine::batched_cholesky;
    plan.reasons.push_back(
        "engine: batched Cholesky" + where +
        (automatic ? " (" + asked + " with the direct solver)" : " (--batch-engine cholesky)"));
    return;
  }
  plan.engine = StudyEngine::batched_cg;
  plan.reasons.push_back(
      "engine: batched CG" + where +
      (automatic ? " (" + asked + " with --solver cg)" : " (--batch-engine cg)"));
}

// Where the scenarios' trials cost their time (BWSN_Network_2's fire flows from a cold start on an
// H200 and its 16-core host, whole processes of 250 to 12,523 scenarios, BENCHMARKS.md §30): a
// host thread 1.34 us a junction a scenario; the trials engine 9.3 ns after a fixed 2.3 s (the
// driver and context, the engine's build and first launches, the baseline). The crossover is
// ~29 million junction-scenarios on 16 threads (2,300 of BWSN_Network_2's fire flows).
constexpr double kHostSecondsPerJunction = 1.34e-6;
constexpr double kGpuSecondsPerJunction = 9.3e-9;
constexpr double kGpuStudyStartSeconds = 2.3;

// --device auto: the GPU only where the trials engine takes the study (EPANET's factor, the
// steady state) and its forecast, the fixed start included, is below the host's; the host else
// (the batched engines' GPU paths were never measured to win). Sets r.gpu; the plan's reason.
std::string choose_device(StudyRunRequest& r, const Network& net, const StudyScope& scope) {
  r.gpu = false;
  const std::string host = "device: host (--device auto: ";
  if (!r.gpu_absent.empty()) return host + "no GPU: " + r.gpu_absent + ")";
  if (r.batch_engine == BatchEngineChoice::cholesky ||
      (r.solver != StudySolver::native_direct && !factor_cg(r)))
    return host +
           "the GPU's engine that can win is the trials engine, which runs EPANET's "
           "factor only)";
  const std::string declined = trials_limits(net, scope);
  if (!declined.empty()) return host + "the trials engine declines the study: " + declined + ")";
  const int threads = study_threads(r.threads, static_cast<std::size_t>(scope.scenarios));
  const StudyDeviceForecast f =
      forecast_study_devices(net.junction_count, scope.scenarios, threads);
  r.gpu = f.gpu < f.host;
  char text[200];
  std::snprintf(text, sizeof text,
                "forecast %.3g s on %d host thread(s) against %.3g s on the GPU, its %.2g s "
                "start included)",
                f.host, threads, f.gpu, kGpuStudyStartSeconds);
  return std::string("device: ") + (r.gpu ? "gpu" : "host") + " (--device auto: " + text;
}

// Threads, and for the batched engines the scenarios in flight and their groups: two for the
// batched Cholesky, so that one group's threads run their trials on the cores while the other
// group's batch is on the device.
void choose_batch(const StudyRunRequest& r, const StudyScope& scope, StudyPlan& plan) {
  const auto scenarios = static_cast<std::size_t>(scope.scenarios);
  if (plan.batched()) {
    const bool direct = plan.engine == StudyEngine::batched_cholesky;
    const int default_batch = direct ? kDefaultDirectBatchSize : kDefaultBatchSize;
    const int in_flight = r.batch > 0 ? r.batch : default_batch;
    plan.threads = study_threads(in_flight, scenarios);
    plan.batch = plan.threads;
    plan.groups = direct && plan.threads >= 2 ? 2 : 1;
    plan.reasons.push_back("batch: " + std::to_string(plan.batch) + " scenarios in flight" +
                           (plan.groups == 2 ? " in 2 groups" : "") + " (" +
                           (r.batch > 0
                                ? "--study-batch " + std::to_string(r.batch)
                                : "the engine's default, " + std::to_string(default_batch)) +
                           (plan.batch < in_flight ? ", at most the study's scenarios" : "") + ")");
    plan.reasons.push_back("threads: " + std::to_string(plan.threads) +
                           " (one a scenario in flight)");
    return;
  }
  plan.threads = study_threads(r.threads, scenarios);
  if (plan.engine == StudyEngine::trials) {
    plan.batch = r.batch;
    plan.reasons.push_back(r.batch > 0 ? "batch: " + std::to_string(r.batch) +
                                             " scenarios a call (--study-batch)"
                                       : "batch: as many scenarios a call as the engine holds");
  }
  plan.reasons.push_back(
      "threads: " + std::to_string(plan.threads) + " (" +
      (r.threads > 0 ? "--threads " + std::to_string(r.threads) : std::string("every core")) +
      (plan.threads < study_threads(r.threads, SIZE_MAX) ? ", at most the scenarios" : "") + ")");
}

void choose_start(const StudyRunRequest& r, const Network& net, StudyPlan& plan) {
  plan.start = r.start;
  if (r.start == StudyStart::cold) {
    plan.reasons.push_back(r.start_by_default
                               ? "start: cold, EPANET's own path (the default: EPANET's answers; "
                                 "--start warm or auto for fewer trials)"
                               : "start: cold, EPANET's own path (asked)");
    return;
  }
  if (r.start == StudyStart::warm) {
    plan.reasons.push_back("start: warm, from the baseline's solution (asked)");
    return;
  }
  if (net.options.demand.model == DemandModel::pda) {
    // PDA's test on delivered demands (1e-4 cfs) leaves its answers path-dependent to ~1e-3
    // (Fossolo_FOS closures: warm and cold 1.1e-3 apart where the probes agreed): EPANET's path.
    plan.start = StudyStart::cold;
    plan.reasons.push_back(
        "start: cold, EPANET's own path (pressure-driven demand: its answers depend on the path)");
    return;
  }
  plan.start_probes = r.start_probes;
  plan.reasons.push_back("start: chosen after the baseline by " + std::to_string(r.start_probes) +
                         " probe scenarios run both ways");
}

}  // namespace

std::string to_string(StudyEngine engine) {
  switch (engine) {
    case StudyEngine::host: return "host";
    case StudyEngine::batched_cg: return "batched CG";
    case StudyEngine::batched_cholesky: return "batched Cholesky";
    case StudyEngine::trials: return "trials";
  }
  return "?";
}

std::string to_string(StudyStart start) {
  switch (start) {
    case StudyStart::warm: return "warm";
    case StudyStart::cold: return "cold";
    case StudyStart::probe: return "probe";
  }
  return "?";
}

StudyDeviceForecast forecast_study_devices(int junctions, int scenarios, int threads) {
  const double work = double(junctions) * double(scenarios);
  return {work * kHostSecondsPerJunction / std::max(1, threads),
          kGpuStudyStartSeconds + work * kGpuSecondsPerJunction};
}

int study_threads(int asked, std::size_t scenarios) {
  int n = asked > 0 ? asked : static_cast<int>(std::thread::hardware_concurrency());
  n = std::max(1, n);
  return static_cast<int>(std::min<std::size_t>(n, std::max<std::size_t>(1, scenarios)));
}

std::string StudyPlan::summary() const {
  std::string text = to_string(engine);
  if (engine != StudyEngine::host) text += " on " + device_name(gpu);
  if (batched())
    text += ", " + std::to_string(batch) + " in flight" +
            (groups > 1 ? " in " + std::to_string(groups) + " groups" : "");
  else
    text += ", " + std::to_string(threads) + " thread(s)";
  if (engine == StudyEngine::trials && batch > 0)
    text += ", " + std::to_string(batch) + " scenarios a call";
  return text + ", " + to_string(start) + " start";
}

std::string StudyPlan::reason(const std::string& key) const {
  const std::string prefix = key + ": ";
  for (const std::string& r : reasons)
    if (r.compare(0, prefix.size(), prefix) == 0) return r.substr(prefix.size());
  return "";
}

void StudyPlan::set_reason(const std::string& key, const std::string& why) {
  const std::string prefix = key + ": ";
  for (std::string& r : reasons)
    if (r.compare(0, prefix.size(), prefix) == 0) {
      r = prefix + why;
      return;
    }
  reasons.push_back(prefix + why);
}

StudyPlan make_study_plan(const StudyRunRequest& request, const Network& net,
                          const StudyScope& scope) {
  StudyPlan plan;
  StudyRunRequest r = request;
  const std::string device = r.device_auto ? choose_device(r, net, scope) : std::string();
  choose_engine(r, net, scope, plan);
  if (!device.empty()) plan.reasons.insert(plan.reasons.begin(), device);
  choose_batch(r, scope, plan);
  choose_start(r, net, plan);
  plan.trial_budget = r.trial_budget;
  plan.cg = r.cg;
  plan.refinement = r.refinement;
  return plan;
}

}  // namespace cgs::net
