// netsolve --study (netsolve_study.hpp): flags, progress line, summary, CSV and JSON report.
#include "app/netsolve_study.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "app/cli_options.hpp"
#include "app/tuning_report.hpp"
#include "base/atomic_file.hpp"
#include "formats/types.hpp"
#include "network/epanet_time.hpp"
#include "network/study.hpp"
#include "app/study_ranks.hpp"

namespace cgs::net {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kExitCompletedWithWarnings = 5;  // as netsolve's run: completed, something flagged

// 1000 gpm in each flow unit, EPANET's own table (epanet-scenarios uses it), in FlowUnits order.
double thousand_gpm(FlowUnits units) {
  static const double value[] = {2.228, 1000,   1.44,  1.2,  4.42,   63.09,
                                 3785.4, 5.451, 227.1, 5451, 0.06309};
  return value[static_cast<int>(units)];
}

// 20 psi, the usual minimum residual pressure of a fire-flow test, in the file's pressure units.
double twenty_psi(const Network& net) {
  switch (net.units.pressure_units) {
    case PressureUnits::psi: return 20.0;
    case PressureUnits::meters: return 20.0 / 1.4219702;  // 1 m of water = 1.42197 psi
    case PressureUnits::kpa: return 20.0 * 6.894757;
    case PressureUnits::bar: return 20.0 * 0.06894757;
    case PressureUnits::feet: return 20.0 * 2.3066587;  // 1 psi = 2.30666 ft of water
  }
  return 20.0;
}

const char* pressure_unit_name(const Network& net) { return to_string(net.units.pressure_units); }

// "study: 812/1891 scenarios (42.9%), 0 failed, 3.1 s, 261.9 a second, about 4.2 s left".
class ProgressLine {
 public:
  // On a terminal one line rewritten in place; in a log (stderr not a terminal: a batch job)
  // a line every kLogSeconds, so the log says how far a long study got.
  enum class Mode { off, terminal, log };
  static constexpr double kLogSeconds = 10;
  explicit ProgressLine(Mode mode) : mode_(mode) {}
  void update(int done, int total, int failed) {
    if (mode_ == Mode::off) return;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const double every = mode_ == Mode::terminal ? 0.2 : kLogSeconds;
    if (done < total && elapsed - last_ < every) return;
    if (done == total && mode_ == Mode::log && last_ < 0) return;  // short: the summary says it
    last_ = elapsed;
    std::fprintf(stderr,
                 "%sstudy: %d/%d scenarios (%.1f%%), %d failed, %.1f s, %.1f a second, about "
                 "%.1f s left%s",
                 mode_ == Mode::terminal ? "\r" : "", done, total, 100.0 * done / total, failed,
                 elapsed, elapsed > 0 ? done / elapsed : 0.0,
                 done > 0 ? elapsed * (total - done) / done : 0.0,
                 mode_ == Mode::terminal && done < total ? "  " : "\n");
    std::fflush(stderr);
  }

 private:
  Mode mode_;
  Clock::time_point start_ = Clock::now();
  double last_ = -1;
};

std::string describe(const StudyOptions& o, const Network& net, int scenarios) {
  std::string text = to_string(o.spec.kind) + ": " + std::to_string(scenarios) + " scenarios";
  char detail[200];
  switch (o.spec.kind) {
    case StudyKind::fireflow:
      std::snprintf(detail, sizeof detail, " (%s), fire flow %.6g %s",
                    o.elements.empty() ? "every junction" : "listed junctions",
                    o.fire_flow * net.units.flow, to_string(net.units.flow_units).c_str());
      break;
    case StudyKind::closure:
      std::snprintf(detail, sizeof detail, " (%s closed for the whole run)",
                    o.elements.empty() ? "every pipe" : "listed pipes");
      break;
    case StudyKind::demand:
      std::snprintf(detail, sizeof detail,
                    " (lognormal demand multipliers per junction, mean 1, cv %g, seed %llu)",
                    o.spec.cv, static_cast<unsigned long long>(o.spec.seed));
      break;
  }
  return text + detail + ", " +
         (o.duration == 0 ? std::string("steady state")
                          : "extended period to " + clock_text(o.duration)) +
         (o.run.start == StudyStart::probe  ? ", start chosen by probes"
          : o.run.start == StudyStart::warm ? ", warm start from the baseline"
                                            : ", cold start (EPANET's initial flows)");
}

// The scenario with the lowest minimum pressure, or -1.
int lowest_scenario(const StudyResults& r) {
  int lowest = -1;
  for (std::size_t i = 0; i < r.scenarios.size(); ++i) {
    const double p = r.scenarios[i].min_pressure;
    if (!std::isnan(p) && (lowest < 0 || p < r.scenarios[lowest].min_pressure))
      lowest = static_cast<int>(i);
  }
  return lowest;
}

void print_summary(const Network& net, const StudyOptions& o, const StudyResults& r) {
  const int n = static_cast<int>(r.scenarios.size());
  std::printf("network %s: %d junctions, %zu links\n", net.source.c_str(), net.junction_count,
              net.links.size());
  std::printf("study %s\n", describe(o, net, n).c_str());
  std::printf("solver %s\n", r.solver_name.c_str());
  std::printf("plan: %s\n", r.plan.summary().c_str());
  if (r.shards > 1)
    std::printf("  ranks: %d (mpirun), scenario i on rank (i - 1) %% %d, rows gathered on rank 0; "
                "the plan is rank 0's\n",
                r.shards, r.shards);
  for (const std::string& why : r.plan.reasons) std::printf("  %s\n", why.c_str());
  const ScenarioResult& b = r.baseline;
  std::printf("baseline: %s, %d trials, min pressure %.4g %s at %s%s%s\n", b.ok ? "ok" : "FAILED",
              b.trials, b.min_pressure, pressure_unit_name(net),
              b.min_node >= 0 ? net.nodes[b.min_node].id.c_str() : "-",
              b.reason.empty() ? "" : "; ", b.reason.c_str());
  long trials = 0;
  for (const ScenarioResult& s : r.scenarios) trials += s.trials;
  std::printf(
      "time: set-up %.4g s (baseline run, %d thread workspaces, %s), scenarios %.4g s on %d "
      "threads: %.4g ms a scenario, %.1f scenarios/s, %.2f trials each\n",
      r.setup_seconds, r.plan.threads,
      r.analyses >= 0 ? (std::to_string(r.analyses) + " symbolic analysis(es) in all").c_str()
                      : "solver analyses not counted",
      r.scenario_seconds, r.plan.threads, n ? 1e3 * r.scenario_seconds / n : 0.0,
      r.scenario_seconds > 0 ? n / r.scenario_seconds : 0.0, n ? double(trials) / n : 0.0);
  if (r.trial_calls > 0)
    std::printf(
        "trials engine: every scenario's trials in %d call(s), kernels %.1f ms, whole calls "
        "%.1f ms; %d scenario(s) handed back to the host engine\n",
        r.trial_calls, r.trial_kernel_ms, r.trial_call_ms, r.host_scenarios);
  if (r.plan.trials_cg)
    std::printf(
        "trials engine's CG: %ld trial(s) whose factor's answer CG corrected, %ld CG "
        "iterations in all (the others accepted at the factor's answer)\n",
        r.trial_corrections, r.trial_cg_iterations);
  if (const BatchRendezvous::Counts& c = r.batch;
      c.launches > 0 && r.plan.engine == StudyEngine::batched_cholesky)
    std::printf(
        "batches: %ld solved, %.1f systems each (%d scenarios in flight), each system "
        "factorised and solved once\n",
        c.launches, double(c.systems) / c.launches, r.plan.threads);
  else if (c.launches > 0)
    std::printf(
        "batches: %ld solved, %.1f systems each (%d scenarios in flight), %.0f CG iterations a "
        "system, %.0f in the slowest of a batch\n",
        c.launches, double(c.systems) / c.launches, r.plan.threads,
        double(c.iterations) / c.systems, double(c.critical_iterations) / c.launches);
  if (r.cold_resolves > 0)
    std::printf("start: %d warm-started scenario(s) ended unbalanced or failed and ran again cold "
                "(EPANET's path)\n",
                r.cold_resolves);
  const int failed = r.failed();
  std::printf("failed: %d of %d scenarios", failed, n);
  for (const ScenarioResult& s : r.scenarios)
    if (!s.ok) {
      std::printf(" (the first: %s: %s)", study_element_name(net, o.spec.kind, s).c_str(),
                  s.reason.c_str());
      break;
    }
  std::printf("\n");
  if (const int i = lowest_scenario(r); i >= 0) {
    const ScenarioResult& s = r.scenarios[i];
    std::printf("lowest pressure: %.4g %s at %s, in scenario %d (%s)\n", s.min_pressure,
                pressure_unit_name(net), net.nodes[s.min_node].id.c_str(), s.scenario,
                study_element_name(net, o.spec.kind, s).c_str());
  }
  int below = 0;
  for (const ScenarioResult& s : r.scenarios) below += s.below_threshold > 0;
  std::printf("scenarios with junctions below %.4g %s: %d of %d\n", o.pressure_threshold,
              pressure_unit_name(net), below, n);
}

nlohmann::json json_row(const Network& net, StudyKind kind, const ScenarioResult& s) {
  auto number = [](double v) { return std::isnan(v) ? nlohmann::json() : nlohmann::json(v); };
  return {{"scenario", s.scenario},
          {"element", study_element_name(net, kind, s)},
          {"ok", s.ok},
          {"iterations", s.trials},
          {"min_pressure", number(s.min_pressure)},
          {"min_node", s.min_node >= 0 ? nlohmann::json(net.nodes[s.min_node].id) : nullptr},
          {"element_pressure", number(s.element_pressure)},
          {"below_threshold", s.below_threshold},
          {"cut_off", s.cut_off},
          {"min_cut_off", s.min_cut_off},
          {"available_flow", number(s.available_flow)},
          {"reason", s.reason}};
}

// The plan as run: each choice and the reasons, as cgsolve's report has its Plan.
nlohmann::json plan_json(const StudyPlan& p) {
  return {{"engine", to_string(p.engine)},
          {"device", p.engine == StudyEngine::host ? "cpu"
                     : p.gpu                       ? "gpu"
                                                   : "cpu"},
          {"start", to_string(p.start)},
          {"batch", p.batch},
          {"groups", p.groups},
          {"threads", p.threads},
          {"trial_budget",
           p.engine == StudyEngine::trials ? nlohmann::json(p.trial_budget) : nlohmann::json()},
          {"trials_declined",
           p.trials_declined.empty() ? nlohmann::json() : nlohmann::json(p.trials_declined)},
          {"summary", p.summary()},
          {"reasons", p.reasons}};
}

nlohmann::json json_report(const Network& net, const StudyOptions& o, const StudyResults& r) {
  const int n = static_cast<int>(r.scenarios.size());
  nlohmann::json j;
  j["network"] = {{"file", net.source},
                  {"junctions", net.junction_count},
                  {"links", net.links.size()},
                  {"flow_units", to_string(net.units.flow_units)},
                  {"pressure_units", pressure_unit_name(net)}};
  j["tuning"] = tuning_json(tuning());
  j["study"] = {{"kind", to_string(o.spec.kind)},
                {"description", describe(o, net, n)},
                {"scenarios", n},
                {"duration_s", o.duration},
                {"warm_start", r.plan.warm()},
                {"start_choice", r.plan.reason("start")},
                {"fire_flow", o.fire_flow * net.units.flow},
                {"pressure_threshold", o.pressure_threshold},
                {"residual_pressure", o.residual_pressure >= 0 ? nlohmann::json(o.residual_pressure)
                                                               : nlohmann::json()}};
  if (o.spec.kind == StudyKind::demand)
    j["study"]["demand"] = {{"draws", o.spec.draws}, {"cv", o.spec.cv}, {"seed", o.spec.seed}};
  j["solver"] = {{"name", r.solver_name},
                 {"symbolic_analyses", r.analyses >= 0 ? nlohmann::json(r.analyses) : nullptr}};
  j["plan"] = plan_json(r.plan);
  j["threads"] = r.plan.threads;
  j["ranks"] = r.shards;
  j["cold_resolves"] = r.cold_resolves;
  if (r.trial_calls > 0)
    j["trials_engine"] = {{"calls", r.trial_calls},
                          {"kernel_ms", r.trial_kernel_ms},
                          {"call_ms", r.trial_call_ms},
                          {"host_scenarios", r.host_scenarios},
                          {"linear_solve", r.plan.trials_cg ? "cg" : "direct"},
                          {"cg_corrections", r.trial_corrections},
                          {"cg_iterations", r.trial_cg_iterations}};
  if (r.batch.launches > 0)
    j["batch"] = {{"scenarios_in_flight", r.plan.threads},
                  {"batches", r.batch.launches},
                  {"systems", r.batch.systems},
                  {"cg_iterations", r.batch.iterations},
                  {"critical_cg_iterations", r.batch.critical_iterations}};
  j["setup_seconds"] = r.setup_seconds;
  j["scenario_seconds"] = r.scenario_seconds;
  j["ms_per_scenario"] = n ? 1e3 * r.scenario_seconds / n : 0.0;
  j["scenarios_per_second"] = r.scenario_seconds > 0 ? n / r.scenario_seconds : 0.0;
  j["failed"] = r.failed();
  j["baseline"] = json_row(net, o.spec.kind, r.baseline);
  if (const int i = lowest_scenario(r); i >= 0)
    j["lowest"] = json_row(net, o.spec.kind, r.scenarios[i]);
  nlohmann::json failures = nlohmann::json::array();
  for (const ScenarioResult& s : r.scenarios)
    if (!s.ok) failures.push_back(json_row(net, o.spec.kind, s));
  j["failures"] = failures;
  return j;
}

}  // namespace

void add_study_options(CLI::App& app, StudyArgs& a) {
  app.add_option("--study", a.study,
                 "Scenario study: fireflow (one scenario per junction), closure (one per pipe, "
                 "closed for the whole run) or demand:N[:cv[:seed]] (N draws of lognormal demand "
                 "multipliers, mean 1, cv default 0.1, seed default 1); steady state unless "
                 "--duration is given; --threads N spreads the scenarios (0 = every core)");
  app.add_option("--study-csv", a.csv, "Write one row per scenario (and the baseline) as CSV");
  app.add_option("--elements", a.elements,
                 "Study only these junctions (fireflow) or pipes (closure): one ID a line");
  app.add_option("--flow", a.flow,
                 "Fire flow added to the junction's demand, in the file's flow units (default "
                 "1000 gpm in them)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--pressure-threshold", a.pressure_threshold,
                 "Count junctions whose pressure falls below this (the file's pressure units; "
                 "default 20 psi in them)");
  app.add_option("--residual-pressure", a.residual_pressure,
                 "Fire flow: also search the flow available at the hydrant at this residual "
                 "pressure (the file's pressure units)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--study-batch", a.batch,
                 "Run the study on the batched engine: this many scenarios in lockstep, their "
                 "linear solves batched (--batch-engine; on the GPU with --device gpu, which "
                 "uses it by default; else on the host, the fallback)")
      ->check(CLI::Range(1, 1 << 16));
  app.add_option("--batch-engine", a.batch_engine,
                 "What the batched engine (--device gpu, --study-batch) solves each trial with: "
                 "cholesky (a batched sparse Cholesky, EPANET's factorisation compiled once per "
                 "network and run one GPU thread a system, the direct study's rows; default 1024 "
                 "scenarios in flight), cg (CG preconditioned by EPANET's factor on the trials "
                 "engine where the study fits it, else the batched CG: the cluster-resident CG "
                 "on the GPU, 128 in flight), trials (every scenario's trials on the engine, one "
                 "GPU thread a scenario: coefficients, assembly, factorisation, status rules; "
                 "steady state; --study-batch: scenarios a call) or auto (trials with --device "
                 "gpu and EPANET's factor where the study allows it, else cg with --solver cg, "
                 "else cholesky)")
      ->check(CLI::IsMember({"auto", "cholesky", "cg", "trials"}));
  app.add_option("--start", a.start,
                 "Where each scenario's trials start: cold (the default: EPANET's initial flows, "
                 "its own path, as epanet-scenarios: EPANET's answers), warm (the baseline's "
                 "solution: fewer trials, answers within the accuracy band of EPANET's, a "
                 "scenario that ends unbalanced or fails re-solved cold) or auto (probe a few "
                 "scenarios both ways and keep warm where they agree with the cold path and it "
                 "takes fewer trials)")
      ->check(CLI::IsMember({"auto", "warm", "cold"}));
  app.add_flag("--cold-start", a.cold_start, "The same as --start cold");
}

void protect_study_files(const StudyArgs& a) {
  if (!a.elements.empty()) protect_input(a.elements);
  if (!a.csv.empty()) check_not_an_input(a.csv, "--study-csv");
}

namespace {

// The study's start as asked: --start, or --cold-start (which --start may only repeat).
StudyStart start_asked(const StudyArgs& a) {
  if (a.cold_start && !a.start.empty() && a.start != "cold")
    throw InputError("--cold-start", 0, "contradicts --start " + a.start);
  const std::string start = a.cold_start || a.start.empty() ? "cold" : a.start;
  return start == "cold"   ? StudyStart::cold
         : start == "warm" ? StudyStart::warm
                           : StudyStart::probe;
}

BatchEngineChoice batch_engine_asked(const std::string& engine) {
  if (engine == "cholesky") return BatchEngineChoice::cholesky;
  if (engine == "cg") return BatchEngineChoice::cg;
  if (engine == "trials") return BatchEngineChoice::trials;
  return BatchEngineChoice::automatic;
}

}  // namespace

// ---- the checkpoint: a long study killed and run again with the same arguments goes on ------
// Each finished row is appended (flushed) to <study csv>.partial, after a line naming the study
// (a hash of the network file and of everything that decides the rows). A run that finds the
// file with the same name resumes: its rows are not run again. The CSV replaces it at the end.
std::uint64_t fnv1a(const std::string& text, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string study_identity(const Network& net, const StudyOptions& o, const StudyRunRequest& r) {
  std::ifstream in(net.source, std::ios::binary);
  std::stringstream file;
  file << in.rdbuf();
  char text[512];
  std::snprintf(text, sizeof text,
                "%s %d %a %llu %a %ld %a %a %d %d %d %s %d %d %d", to_string(o.spec.kind).c_str(),
                o.spec.draws, o.spec.cv, static_cast<unsigned long long>(o.spec.seed), o.fire_flow,
                o.duration, o.pressure_threshold, o.residual_pressure, static_cast<int>(r.start),
                static_cast<int>(r.batch_engine), static_cast<int>(r.solver),
                r.cg.precond.text().c_str(), r.gpu ? 1 : 0, o.shard, o.shards);
  std::string elements;
  for (int e : o.elements) elements += std::to_string(e) + ",";
  char hex[40];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(fnv1a(elements, fnv1a(text, fnv1a(file.str())))));
  return std::string("netsolve study checkpoint ") + hex + "\n";
}

class Checkpoint {
 public:
  // Reads the rows of a checkpoint of this study (identity) at path, drops a row cut short, and
  // opens the file to append; InputError where it belongs to another study.
  Checkpoint(std::string path, const std::string& identity) : path_(std::move(path)) {
    std::ifstream in(path_, std::ios::binary);
    std::stringstream text;
    if (in) text << in.rdbuf();
    const std::string old = text.str();
    std::size_t used = 0;
    if (!old.empty()) {
      if (old.compare(0, identity.size(), identity) != 0)
        throw InputError(path_, 1,
                         "a checkpoint of another study (other arguments, elements or network): "
                         "remove it to start again");
      rows_ = read_scenario_rows(old.substr(identity.size()), &used);
    }
    const std::string kept = identity + old.substr(identity.size() * !old.empty(), used);
    file_ = std::fopen(path_.c_str(), "wb");
    if (!file_ || std::fwrite(kept.data(), 1, kept.size(), file_) != kept.size())
      throw InputError(path_, 0, "cannot write the study's checkpoint here");
    std::fflush(file_);
  }
  ~Checkpoint() {
    if (file_) std::fclose(file_);
  }
  Checkpoint(const Checkpoint&) = delete;
  Checkpoint& operator=(const Checkpoint&) = delete;
  const std::vector<ScenarioResult>& rows() const { return rows_; }
  void add(const ScenarioResult& row) {  // the engine serialises the calls
    const std::string line = scenario_row_text(row);
    std::fwrite(line.data(), 1, line.size(), file_);
    std::fflush(file_);
  }
  void finish() {  // the study's outputs are written: the checkpoint has served
    std::fclose(file_);
    file_ = nullptr;
    std::remove(path_.c_str());
  }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<ScenarioResult> rows_;
};

int run_study_command(const StudyArgs& a, const Network& net, const std::string& duration,
                      StudyRunRequest run, const std::string& report_path, bool quiet,
                      const std::function<std::unique_ptr<LinearSolver>()>& make_solver) {
  StudyOptions o;
  o.spec = parse_study(a.study);
  if (!a.elements.empty()) o.elements = read_study_elements(a.elements, net, o.spec.kind);
  o.fire_flow = (a.flow >= 0 ? a.flow : thousand_gpm(net.units.flow_units)) / net.units.flow;
  o.duration = duration.empty() ? 0 : parse_duration(duration);
  o.pressure_threshold = a.pressure_threshold >= 0 ? a.pressure_threshold : twenty_psi(net);
  o.residual_pressure = a.residual_pressure;
  if (o.residual_pressure >= 0 && o.spec.kind != StudyKind::fireflow)
    throw InputError("--residual-pressure", 0, "applies to fireflow studies only");
  run.start = start_asked(a);
  run.start_by_default = a.start.empty() && !a.cold_start;
  run.start_probes = kDefaultStartProbes;
  run.batch = a.batch;
  run.batch_engine = batch_engine_asked(a.batch_engine);
  // Under mpirun (more than one rank) each rank runs one shard of the scenarios on its share of
  // its node's cores and rank 0 gathers the rows and writes every output.
  const std::unique_ptr<StudyRanks> session = open_study_ranks();
  if (session) {
    o.shard = session->rank(), o.shards = session->size();
    if (run.threads == 0)
      run.threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()) /
                                    session->local_size());
    quiet = quiet || session->rank() != 0;
  }
  o.run = run;
  std::optional<Checkpoint> checkpoint;
  if (!a.csv.empty()) {
    const std::string path = a.csv + ".partial" +
                             (o.shards > 1 ? "." + std::to_string(o.shard) : std::string());
    checkpoint.emplace(path, study_identity(net, o, run));
    o.done = checkpoint->rows();
    o.on_row = [&](const ScenarioResult& row) { checkpoint->add(row); };
    if (!o.done.empty() && !quiet)
      std::printf("resuming: %zu scenario(s) done before, from %s\n", o.done.size(),
                  path.c_str());
  }
  ProgressLine progress(quiet                     ? ProgressLine::Mode::off
                        : isatty(fileno(stderr)) ? ProgressLine::Mode::terminal
                                                 : ProgressLine::Mode::log);
  o.on_progress = [&](int done, int total, int failed) { progress.update(done, total, failed); };
  const auto started = std::chrono::steady_clock::now();
  StudyResults r;
  try {
    r = run_study(net, make_solver, o);
  } catch (const std::exception& e) {
    if (!session || session->size() == 1) throw;
    // The other ranks would wait for this one's rows: end the job (input errors never get here,
    // every rank reads the same input and stops on it before the study).
    std::fprintf(stderr, "netsolve: rank %d: %s\n", session->rank(), e.what());
    session->abort(kExitBadInput);
  }
  if (session && session->size() > 1) {
    const std::vector<std::string> shards = session->gather(shard_text(r));
    if (session->rank() != 0) {  // rank 0 writes and answers for the job
      session->barrier();  // once it has, this rank's checkpoint has served
      if (checkpoint) checkpoint->finish();
      return 0;
    }
    merge_shards(r, shards);
    r.scenario_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() -
        r.setup_seconds;
  }
  if (!quiet) print_summary(net, o, r);
  if (!a.csv.empty()) write_study_csv(a.csv, net, r, o);
  if (!report_path.empty())
    write_file_atomically(report_path, json_report(net, o, r).dump(2) + "\n");
  if (session && session->size() > 1) session->barrier();  // the other ranks may go
  if (checkpoint) checkpoint->finish();
  int flagged = 0;
  for (const ScenarioResult& s : r.scenarios) flagged += !s.ok || !s.reason.empty();
  if (flagged == 0 && r.baseline.ok && r.baseline.reason.empty()) return 0;
  std::fprintf(stderr,
               "netsolve: %s: warning: %d of %zu scenarios failed or unbalanced%s; flagged in the "
               "study's rows (exit %d)\n",
               net.source.c_str(), flagged, r.scenarios.size(),
               r.baseline.ok ? "" : ", and the baseline failed", kExitCompletedWithWarnings);
  return kExitCompletedWithWarnings;
}

}  // namespace cgs::net
