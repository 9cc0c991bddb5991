// netsolve: an EPANET network in, its hydraulics out over the duration of its [TIMES] (an
// extended-period simulation as EPANET's; --duration 0: the steady state at time 0), every
// gradient-algorithm trial's linear system solved by a sparse Cholesky factorisation (--solver
// direct, the default) or by cgsolve's CG (--solver cg: any format, device, sorting). See
// network/README.md.
//
// Exit codes as cgsolve's: 0 every period converged, 1 a period could not be solved (EPANET's
// error 110; the results up to it are written), a CG solve did not converge or the reference does
// not match, 2 bad input, 4 device unavailable, and 5 completed with warnings: some period ended
// UNBALANCED (its trials exhausted) and the run went on (UNBALANCED CONTINUE) or halted after it
// (UNBALANCED STOP) exactly where EPANET completes with its warning "system unbalanced". A warning
// line on stderr names those periods, also with --quiet: never a silent exit.
#include <malloc.h>
#include <omp.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "app/cli_options.hpp"
#include "app/demand_model_options.hpp"
#include "app/netsolve_quality.hpp"
#include "app/netsolve_study.hpp"
#include "app/tuning_report.hpp"
#include "base/atomic_file.hpp"
#include "formats/matrix_market.hpp"
#include "formats/types.hpp"
#include "network/energy.hpp"
#include "network/epanet_out.hpp"
#include "network/epanet_report.hpp"
#include "network/epanet_time.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network/results_io.hpp"
#include "network/simulation.hpp"
#include "solver/distributed/distributed_solve.hpp"
#include "solver/plan.hpp"
#include "spmv/backend.hpp"
#include "spmv/cuda/cuda_backends.hpp"

namespace {

using namespace cgs;
using namespace cgs::net;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Args {
  std::string network, nodes_csv, links_csv, tanks_csv, export_dir, report;
  std::string reference_dir;      // EPANET's <net>_nodes.csv(.gz) / _links.csv(.gz) to compare with
  std::string solver = "direct";  // direct (sparse Cholesky) or cg
  std::string direct_backend = "auto";  // the sparse Cholesky's library (--direct-backend)
  std::string elimination_order;        // --elimination-order: junction IDs, one a line
  std::string duration;                 // empty: the file's DURATION
  std::string trace;                    // --trace: the periods whose trials are printed
  std::string out_file;                 // --out: EPANET's binary output file
  std::string quality_csv;              // --quality: the water quality series
  bool no_quality = false;              // --no-quality: the hydraulics alone
  std::string quality_hydraulics = "file";  // --quality-hydraulics: file (float32) or doubles
  std::string rpt;                      // --rpt: EPANET's report file
  std::vector<std::string> positional;  // runepanet's form: NET.inp NET.rpt [NET.out]
  bool quiet = false;
  RefinementOptions refinement;
  DemandModelFlags demand_model;  // --demand-model, --minimum-pressure, ... over the file's
  StudyArgs study;                // --study and its options (app/netsolve_study.cpp)
};

// The process's peak resident memory so far, kB (getrusage's ru_maxrss).
long peak_rss_kb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// What netsolve measured besides the simulation itself.
struct RunInfo {
  std::string device_choice;  // --device auto's, for a single run
  double read_seconds = 0, total_seconds = 0;
  index_t nnz = 0;
  int threads = 1;  // the host threads of a run's trials (--threads; 0 there: every core)
};

// --elimination-order: every junction's ID once, one a line, in the order to eliminate them.
std::vector<int> read_elimination_order(const std::string& path, const Network& net) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open the elimination order");
  std::unordered_map<std::string, int> junction;
  for (int i = 0; i < net.junction_count; ++i) junction[net.nodes[i].id] = i;
  std::vector<int> order;
  std::string id;
  for (long line = 1; std::getline(in, id); ++line) {
    id.erase(id.find_last_not_of(" \t\r") + 1);
    if (id.empty()) continue;
    const auto it = junction.find(id);
    if (it == junction.end()) throw InputError(path, line, "'" + id + "' is not a junction");
    if (it->second < 0) throw InputError(path, line, "junction '" + id + "' listed twice");
    order.push_back(it->second);
    it->second = -1;
  }
  if (static_cast<int>(order.size()) != net.junction_count)
    throw InputError(path, 0,
                     std::to_string(order.size()) + " junctions listed, the network has " +
                         std::to_string(net.junction_count));
  return order;
}

DirectBackend direct_backend(const Args& args) {
  if (args.direct_backend == "cholmod") return DirectBackend::cholmod;
  if (args.direct_backend == "eigen") return DirectBackend::eigen;
  if (args.direct_backend == "native") return DirectBackend::native;
  return DirectBackend::automatic;
}

std::unique_ptr<LinearSolver> make_direct(const Args& args, const Network& net) {
  if (args.elimination_order.empty()) return make_direct_solver(direct_backend(args));
  const DirectBackend backend = direct_backend(args);
  if (backend != DirectBackend::native && backend != DirectBackend::automatic)
    throw InputError("--elimination-order is for the native direct solver only");
  return make_native_solver(read_elimination_order(args.elimination_order, net));
}

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

// --trace: the time whose periods' trials are printed; -1 without it.
long trace_time(const Args& args) {
  return args.trace.empty() ? -1 : parse_duration(args.trace, "--trace");
}

// "auto: inspected once, on the first system: chose ... (why); inspector 1.2 ms (0.5% of the
// linear solves); the choice reused for the 17 later CG solves (same sparsity pattern)"
std::string describe_autotune(const AutotuneRecord& a, double linear_seconds) {
  std::string text =
      "auto: inspected " +
      (a.inspections == 1
           ? std::string("once, on the first system")
           : std::to_string(a.inspections) + " times (the sparsity pattern changed)") +
      ": chose " + to_string(a.format) + (a.kernel.empty() ? "" : "/" + a.kernel) +
      (a.sort_rows ? ", rows sorted" : ", rows in file order") + " (" + a.reason + ")";
  char cost[160];
  std::snprintf(cost, sizeof cost,
                "; inspector %.2f ms (%.1f%% of the linear solves); the choice reused for the %d "
                "later CG solve(s) (same sparsity pattern)",
                a.seconds * 1e3, linear_seconds > 0 ? 100 * a.seconds / linear_seconds : 0.0,
                a.reused);
  return text + cost;
}

void print_network(const Network& net, const LinearSolver& solver, const RunInfo& info,
                   double linear_seconds) {
  int tanks = 0, reservoirs = 0, pumps = 0, valves = 0;
  for (const Node& n : net.nodes)
    tanks += n.type == NodeType::tank, reservoirs += n.type == NodeType::reservoir;
  for (const Link& l : net.links)
    pumps += l.type == LinkType::pump, valves += l.type >= LinkType::prv;
  std::printf(
      "network %s: %d junctions, %d reservoirs, %d tanks, %zu links (%d pumps, %d valves), "
      "%zu controls, %zu rules\n",
      net.source.c_str(), net.junction_count, reservoirs, tanks, net.links.size(), pumps, valves,
      net.controls.size(), net.rules.size());
  std::printf("junction matrix: order %d, %d nonzeros (%.4f%% nonzero); linear solver %s\n",
              net.junction_count, info.nnz,
              100.0 * info.nnz / (double(net.junction_count) * std::max(1, net.junction_count)),
              solver.name().c_str());
  if (!info.device_choice.empty()) std::printf("%s\n", info.device_choice.c_str());
  const AutotuneRecord a = solver.autotune();
  if (a.inspections > 0) std::printf("%s\n", describe_autotune(a, linear_seconds).c_str());
}

// EPANET completes such a run with warnings (codes below 100); netsolve says so on stderr and
// exits with its own code, distinct from both success and failure.
constexpr int kExitCompletedWithWarnings = 5;

void warn_unbalanced(const Network& net, const SimulationResults& s) {
  int count = 0, trials = 0;
  long first = -1;
  for (const StepReport& r : s.steps)
    if (!r.solve.converged && r.solve.error.empty() && count++ == 0)
      first = r.time, trials = r.solve.trials;
  const bool halted = !s.completed;
  std::fprintf(stderr,
               "netsolve: %s: warning: %d period(s) UNBALANCED, the first at %s after %d trials%s "
               "(exit %d)\n",
               net.source.c_str(), count, clock_text(first).c_str(), trials,
               halted ? ("; UNBALANCED STOP: the run halted at " + clock_text(s.steps.back().time) +
                         ", as EPANET's")
                            .c_str()
               : net.options.extra_trials >= 0
                   ? "; the run went on (UNBALANCED CONTINUE)"
                   : "; the run went on (UNBALANCED STOP halts only where the flows miss ACCURACY)",
               kExitCompletedWithWarnings);
}

const char* status_name(LinkStatus s) {
  static const char* const names[] = {
      "closed (head too high)", "temporarily closed", "closed",          "open", "active",
      "open (flow too high)",   "open (XFCV)",        "open (XPRESSURE)"};
  return names[static_cast<int>(s)];
}

// The trials of one period, as the steady state has always printed them.
void print_trials(const Network& net, const PeriodSolve& p) {
  std::printf("%5s %10s %5s %11s %12s %13s %13s %11s %11s\n", "trial", "CG iters", "solves",
              "solve (s)", "rel. change", "max dH", "max dQ", "scaled res.", "backw. err.");
  for (const TrialReport& t : p.trial_reports) {
    if (t.failed_junction >= 0) {
      std::printf("%5d  factorisation failed at junction %s%s\n", t.trial,
                  net.nodes[t.failed_junction].id.c_str(),
                  t.fixed_valve >= 0
                      ? (": valve " + net.links[t.fixed_valve].id +
                         " caused ill-conditioning, its status fixed; trial repeated")
                            .c_str()
                      : "");
      continue;
    }
    std::printf("%5d %10ld %5d %11.4g %12.4g %13.6g %13.6g %11.3g %11.3g%s\n", t.trial,
                t.cg_iterations, t.refinement_steps, t.solve_seconds, t.relative_flow_change,
                user_head(net, t.max_head_change), user_flow(net, t.max_flow_change),
                t.scaled_residual, t.backward_error,
                t.linear_converged ? "" : "  CG NOT CONVERGED");
    if (t.file_order)
      std::printf(
          "      solved in the file's junction order: the fill-reducing order met a pivot "
          "<= 0 that no control valve explains\n");
    for (const auto& [link, status] : t.status_changes)
      std::printf("      link %s: %s\n", net.links[link].id.c_str(), status_name(status));
  }
}

// One line per hydraulic step.
void print_steps(const SimulationResults& s) {
  std::printf("%10s %8s %6s %6s %11s %11s %12s\n", "time", "step (s)", "trials", "solves",
              "iterations", "linear (s)", "rel. change");
  for (const StepReport& r : s.steps) {
    const PeriodSolve& p = r.solve;
    std::printf("%10s %8ld %6d %6d %11ld %11.4g %12.4g%s\n", clock_text(r.time).c_str(), r.length,
                p.trials, p.linear_solves, p.linear_iterations, p.linear_seconds,
                p.relative_flow_change,
                !p.error.empty()      ? "  NOT SOLVED"
                : !p.converged        ? "  UNBALANCED"
                : !p.linear_converged ? "  CG NOT CONVERGED"
                                      : "");
  }
}

struct Totals {
  int trials = 0, solves = 0;
  long iterations = 0;
  bool linear_ok = true;
};

Totals totals_of(const SimulationResults& s) {
  Totals t;
  for (const StepReport& r : s.steps) {
    t.trials += r.solve.trials;
    t.solves += r.solve.linear_solves;
    t.iterations += r.solve.linear_iterations;
    t.linear_ok = t.linear_ok && r.solve.linear_converged;
  }
  return t;
}

// Junctions cut off from every reservoir and tank at some reporting time.
std::vector<int> ever_cut_off(const SimulationResults& s) {
  std::set<int> nodes;
  for (const Snapshot& snap : s.reports) nodes.insert(snap.cut_off.begin(), snap.cut_off.end());
  return {nodes.begin(), nodes.end()};
}

const char* pressure_unit_name(const Network& net) { return to_string(net.units.pressure_units); }

// Pressure-driven demand: the period with the largest share of demand not delivered.
void print_demand_deficit(const Network& net, const SimulationResults& s) {
  const DemandModelOptions& d = net.options.demand;
  if (d.model != DemandModel::pda || s.steps.empty()) return;
  const StepReport* worst = &s.steps.front();
  for (const StepReport& r : s.steps)
    if (r.solve.demand_reduction > worst->solve.demand_reduction) worst = &r;
  std::printf("pressure-driven demand (minimum %g, required %g %s, exponent %g): ",
              d.minimum_pressure, d.required_pressure, pressure_unit_name(net), d.exponent);
  if (worst->solve.deficient_nodes == 0) {
    std::printf("every junction delivered its full demand\n");
    return;
  }
  std::printf("%s%d junction(s) short of their demand, %.4g%% of it not delivered\n",
              s.steps.size() == 1 ? "" : ("at worst, at " + clock_text(worst->time) + ", ").c_str(),
              worst->solve.deficient_nodes, worst->solve.demand_reduction);
}

void print_summary(const Network& net, const SimulationResults& s, const LinearSolver& solver,
                   const RunInfo& info) {
  print_network(net, solver, info, s.linear_seconds);
  print_tuning_differences(stdout, tuning());
  const bool steady = s.duration == 0 && s.steps.size() == 1;
  if (steady)
    print_trials(net, s.steps.front().solve);
  else
    print_steps(s);
  const Totals t = totals_of(s);
  if (!s.error.empty()) std::printf("ERROR: %s\n", s.error.c_str());
  if (steady) {
    const PeriodSolve& p = s.steps.front().solve;
    std::printf("%s after %d trials (relative flow change %.3g, ACCURACY %g); %ld CG iterations\n",
                p.converged ? "converged" : "NOT CONVERGED", p.trials, p.relative_flow_change,
                net.options.accuracy, t.iterations);
  } else {
    int unbalanced = 0;
    for (const StepReport& r : s.steps) unbalanced += !r.solve.converged && r.solve.error.empty();
    std::printf(
        "%s: %zu hydraulic steps to %s (duration %s), %zu reporting times; %d trials, %d linear "
        "solves, %ld CG iterations%s\n",
        s.completed ? "completed" : "STOPPED", s.steps.size(),
        clock_text(s.steps.empty() ? 0 : s.steps.back().time).c_str(),
        clock_text(s.duration).c_str(), s.reports.size(), t.trials, t.solves, t.iterations,
        unbalanced ? (", " + std::to_string(unbalanced) + " step(s) UNBALANCED").c_str() : "");
  }
  std::printf(
      "time: %.4g s total: %.4g s reading the network, %.4g s in linear solves (%.1f%%), %.4g s "
      "in the rest; %d thread(s), peak memory %.1f MB\n",
      info.total_seconds, info.read_seconds, s.linear_seconds,
      info.total_seconds > 0 ? 100.0 * s.linear_seconds / info.total_seconds : 0.0,
      info.total_seconds - info.read_seconds - s.linear_seconds, info.threads,
      peak_rss_kb() / 1024.0);
  print_demand_deficit(net, s);
  const std::vector<int> cut = ever_cut_off(s);
  if (!cut.empty()) {
    std::printf(
        "%zu junctions cut off from every reservoir and tank by closed links%s (heads not "
        "determined by the network):",
        cut.size(), steady ? "" : " at some reporting time");
    for (std::size_t i = 0; i < cut.size() && i < 20; ++i)
      std::printf("%s %s", i ? "," : "", net.nodes[cut[i]].id.c_str());
    std::printf("%s\n", cut.size() > 20 ? ", ..." : "");
  }
  for (const std::string& note : net.notes) std::printf("note: %s\n", note.c_str());
}

nlohmann::json json_trials(const Network& net, const PeriodSolve& p) {
  nlohmann::json trials = nlohmann::json::array();
  for (const TrialReport& t : p.trial_reports) {
    trials.push_back({{"trial", t.trial},
                      {"cg_iterations", t.cg_iterations},
                      {"solve_seconds", t.solve_seconds},
                      {"other_seconds", t.assemble_seconds},
                      {"relative_flow_change", t.relative_flow_change},
                      {"max_head_change", user_head(net, t.max_head_change)},
                      {"max_flow_change", user_flow(net, t.max_flow_change)},
                      {"true_relative_residual", t.residual},
                      {"scaled_relative_residual", t.scaled_residual},
                      {"backward_error", t.backward_error},
                      {"refinement_steps", t.refinement_steps},
                      {"cg_converged", t.linear_converged},
                      {"failed_junction", t.failed_junction >= 0
                                              ? nlohmann::json(net.nodes[t.failed_junction].id)
                                              : nlohmann::json()}});
  }
  return trials;
}

nlohmann::json json_report(const Network& net, const SimulationResults& s, const LinearSolver& sv,
                           const RunInfo& info) {
  nlohmann::json j;
  j["network"] = {{"file", net.source},
                  {"junctions", net.junction_count},
                  {"nodes", net.nodes.size()},
                  {"links", net.links.size()},
                  {"controls", net.controls.size()},
                  {"rules", net.rules.size()},
                  {"flow_units", to_string(net.units.flow_units)}};
  j["matrix"] = {{"order", net.junction_count}, {"nnz", info.nnz}};
  // The run's host threads and the process's peak resident memory when the report is made.
  j["threads"] = info.threads;
  j["peak_rss_kb"] = peak_rss_kb();
  j["tuning"] = tuning_json(tuning());
  const DemandModelOptions& d = net.options.demand;
  j["demand_model"] = {{"model", to_string(d.model)},
                       {"minimum_pressure", d.minimum_pressure},
                       {"required_pressure", d.required_pressure},
                       {"pressure_exponent", d.exponent},
                       {"pressure_units", pressure_unit_name(net)}};
  j["solver"] = {{"kind", sv.kind()}, {"backend", sv.backend()}, {"name", sv.name()}};
  if (const Plan* p = sv.plan())  // CG: what ran, and every decision's reason
    j["solver"]["plan"] = {{"format", to_string(p->format)},
                           {"device", to_string(p->device)},
                           {"loop", to_string(p->loop)},
                           {"threads", p->threads},
                           {"precond", p->precond.text()},
                           {"reasons", p->reasons}};
  if (const AutotuneRecord a = sv.autotune(); a.inspections > 0)
    j["autotune"] = {
        {"inspections", a.inspections},  {"reused_solves", a.reused},
        {"format", to_string(a.format)}, {"kernel", a.kernel},
        {"sort_rows", a.sort_rows},      {"reason", a.reason},
        {"seconds", a.seconds},          {"summary", describe_autotune(a, s.linear_seconds)}};
  const Totals t = totals_of(s);
  j["series"] = {
      {"duration_s", s.duration},
      {"steps", s.steps.size()},
      {"reporting_times", s.reports.size()},
      {"last_time_s", s.steps.empty() ? 0 : s.steps.back().time},
      {"trials", t.trials},
      {"linear_solves", t.solves},
      {"linear_iterations", t.iterations},
      {"completed", s.completed},
      {"unbalanced", s.unbalanced},
      {"error", s.error},
      {"error_time_s", s.error_time >= 0 ? nlohmann::json(s.error_time) : nlohmann::json()}};
  nlohmann::json steps = nlohmann::json::array();
  for (const StepReport& r : s.steps)
    steps.push_back({{"time_s", r.time},
                     {"length_s", r.length},
                     {"trials", r.solve.trials},
                     {"converged", r.solve.converged},
                     {"relative_flow_change", r.solve.relative_flow_change},
                     {"linear_solves", r.solve.linear_solves},
                     {"linear_iterations", r.solve.linear_iterations},
                     {"linear_seconds", r.solve.linear_seconds},
                     {"seconds", r.solve.seconds},
                     {"deficient_nodes", r.solve.deficient_nodes},
                     {"demand_reduction_pct", r.solve.demand_reduction}});
  j["steps"] = steps;
  // The first period in full, as the steady-state report has always had it.
  if (!s.steps.empty()) {
    const PeriodSolve& first = s.steps.front().solve;
    j["converged"] = first.converged;
    j["trials"] = first.trials;
    j["relative_flow_change"] = first.relative_flow_change;
    j["trial_reports"] = json_trials(net, first);
  }
  j["error"] = s.error;
  j["total_seconds"] = info.total_seconds;
  j["read_seconds"] = info.read_seconds;
  if (!info.device_choice.empty()) j["device_choice"] = info.device_choice;
  j["linear_seconds"] = s.linear_seconds;
  nlohmann::json cut = nlohmann::json::array();
  for (int n : ever_cut_off(s)) cut.push_back(net.nodes[n].id);
  j["cut_off_nodes"] = cut;
  j["notes"] = net.notes;
  return j;
}

// --reference DIR: the series against EPANET's; prints one line and the first failures.
bool compare_reference(const Args& args, const Network& net, const SimulationResults& s,
                       nlohmann::json& report) {
  const std::string name = stem(args.network);
  const std::string nodes = find_reference_file(args.reference_dir, name, "nodes");
  const std::string links = find_reference_file(args.reference_dir, name, "links");
  if (nodes.empty() || links.empty())
    throw InputError(args.reference_dir + "/" + name + "_nodes.csv", 0,
                     "no reference results (" + name + "_nodes.csv[.gz] and " + name +
                         "_links.csv[.gz]) in " + args.reference_dir);
  const SeriesComparison c =
      compare_series_with_reference(net, s, nodes, links, 1e-3, 1e-3, flow_noise_floor(net));
  std::printf(
      "vs EPANET: %d reporting times, %ld values compared (%ld cut off); max head error %.3g "
      "(%s), max flow error %.3g (%s), max demand error %.3g (%s), max tank level error %.3g "
      "(%s), %d status differences%s: %s\n",
      c.times_compared, c.values_compared, c.cut_off_skipped, c.max_head_error,
      c.worst_head.c_str(), c.max_flow_error, c.worst_flow.c_str(), c.max_demand_error,
      c.worst_demand.c_str(), c.max_level_error, c.worst_level.c_str(), c.status_mismatches,
      c.times_missing.empty() ? ""
                              : (", " + std::to_string(c.times_missing.size()) +
                                 " reference times not computed (from " +
                                 std::to_string(c.times_missing.front()) + " s)")
                                    .c_str(),
      c.ok() ? "match" : "MISMATCH");
  for (const auto& f : c.failures) std::printf("  %s\n", f.c_str());
  report["reference"] = {{"times_compared", c.times_compared},
                         {"times_missing", c.times_missing.size()},
                         {"max_head_error", c.max_head_error},
                         {"max_flow_error", c.max_flow_error},
                         {"max_demand_error", c.max_demand_error},
                         {"max_level_error", c.max_level_error},
                         {"status_mismatches", c.status_mismatches},
                         {"failures", c.failure_count},
                         {"match", c.ok()}};
  return c.ok();
}

// The network as read, with --demand-model and its options over the file's.
Network read_network(const Args& args) {
  Network net = read_inp(args.network);
  apply_demand_model_flags(args.demand_model, net);
  return net;
}

// The CG request of every trial: --max-iters' default is raised, these systems needing far more
// than 10 n iterations (README).
SolveRequest network_request(SolveRequest request, const Network& net) {
  if (request.cg.max_iters == 0)
    request.cg.max_iters = std::max<long>(200000, 100L * net.junction_count);
  return request;
}

// Inputs registered before anything runs, outputs checked against them (never written over one).
void protect_files(const Args& args) {
  protect_input(args.network);
  if (!args.reference_dir.empty()) {
    const std::string base = args.reference_dir + "/" + stem(args.network);
    protect_input(base + "_nodes.csv");
    protect_input(base + "_links.csv");
  }
  if (!args.export_dir.empty())  // a folder, made if missing
    check_not_an_input(args.export_dir, "--export-systems");
  check_outputs({{"--rpt", args.rpt},
                 {"--nodes", args.nodes_csv},
                 {"--links", args.links_csv},
                 {"--tanks", args.tanks_csv},
                 {"--quality", args.quality_csv},
                 {"--report", args.report},
                 {"--out", args.out_file}});
}

// --precond auto (netsolve's default) on a run's trials: the network rule, chol in EPANET's
// elimination order (the direct path's factor, rounded as EPANET's), CG started from its M^-1 b
// (network/README.md says why: on networks with zones cut off by closed links EPANET's answer
// is its own rounding, which no other factor or iteration reproduces).
// A pivot <= 0 there falls back to the direct path's other orders (network/cg_solver.cpp), as
// the direct path does. Its substitutions run as one sweep on one thread unless --threads asks
// for more: level by level on several, a network's factor (a few rows a level) pays a barrier
// per level for little work.
SolveRequest with_network_rule(SolveRequest request) {
  if (!request.precond.is("auto")) return request;
  request.precond = PrecondSpec{"chol", "order=given,pivot=fail", {}};
  if (request.backend.threads == 0) request.backend.threads = 1;
  return request;
}

std::unique_ptr<LinearSolver> make_solver(const Args& args, const Network& net,
                                          const SolveRequest& request) {
  return args.solver == "cg" ? make_cg_solver(with_network_rule(request), args.refinement)
                             : make_direct(args, net);
}

// --study: the scenarios as the study's plan says (network/study_plan.hpp chooses engine, start,
// batch and threads from what is asked here); the baseline on --solver's solver, on the host.
int run_scenarios(const Args& args, const Network& net, SolveRequest request) {
  protect_study_files(args.study);
  // With --solver cg and --precond auto the baseline and the host engine's threads run the
  // network rule (make_solver), the trials engine CG preconditioned by the same factor, and the
  // batched CG's members Jacobi-scaled CG (the study's plan says which).
  StudyRunRequest run;
  // --threads spreads the scenarios; each thread's CG (--solver cg) then runs on one.
  run.threads = request.backend.threads;
  request.backend.threads = 1;
  run.gpu = request.backend.device == Device::gpu;
  run.device_auto = request.device_auto;
  if (run.device_auto && !cuda_device_present(&run.gpu_absent) && run.gpu_absent.empty())
    run.gpu_absent = "none found";
  const DirectBackend backend = direct_backend(args);
  const bool native = args.elimination_order.empty() &&
                      (backend == DirectBackend::native || backend == DirectBackend::automatic);
  run.solver = args.solver == "cg" ? StudySolver::cg
               : native            ? StudySolver::native_direct
                                   : StudySolver::other_direct;
  run.cg = request;
  run.refinement = args.refinement;
  SolveRequest baseline = request;
  if (baseline.backend.device == Device::gpu) baseline.backend.device = Device::omp;
  return run_study_command(args.study, net, args.duration, run, args.report, args.quiet,
                           [&] { return make_solver(args, net, baseline); });
}

// The pump energy (EPANET's, for the JSON report) and --out's file, recorded along the run
// through its period and step hooks (the file's water quality read from the run's QualityRun,
// where it has one); the file is finished only where every period was solved
// (as EPANET's, which writes none when its hydraulics stop on an error).
struct RunRecorders {
  EnergyMeter energy;
  std::unique_ptr<EpanetOutWriter> out;
  RunRecorders(const Args& args, const Network& net, long duration, const QualityRun* quality)
      : energy(net, duration) {
    if (args.out_file.empty()) return;
    out = std::make_unique<EpanetOutWriter>(net, args.out_file, args.network, duration,
                                            quality ? &quality->engine() : nullptr);
    out_path = args.out_file;
  }
  EnergyReport finish(const SimulationResults& s, nlohmann::json& summary) {
    EnergyReport report = energy.report();
    if (!out || !s.error.empty()) return report;
    out->finish(report);
    summary = {{"file", out_path},
               {"periods", out->periods()},
               {"warning", out->warning()},
               {"seconds", out->seconds()}};
    return report;
  }
  std::string out_path;
};

nlohmann::json json_energy(const Network& net, const EnergyReport& e) {
  nlohmann::json pumps = nlohmann::json::array();
  for (const PumpEnergy& p : e.pumps)
    pumps.push_back({{"pump", net.links[p.link].id},
                     {"utilization_pct", p.utilization},
                     {"efficiency_pct", p.efficiency},
                     {"kwh_per_volume", p.kwh_per_volume},
                     {"average_kw", p.average_kw},
                     {"peak_kw", p.peak_kw},
                     {"cost_per_day", p.cost_per_day}});
  return {{"volume_unit", e.volume_unit()},
          {"pumps", pumps},
          {"peak_kw", e.peak_kw},
          {"demand_charge_per_kw", e.charge_per_kw},
          {"demand_charge", e.demand_charge},
          {"total_cost", e.total_cost}};
}

// The run over --duration (or the file's), each trial's system exported where asked.
SimulationResults simulate_network(const Args& args, const Network& net, LinearSolver& solver,
                                   RunInfo& info, EnergyReport& energy, nlohmann::json& out,
                                   QualityRun* quality, EpanetReport* rpt) {
  SimulationOptions sim;
  if (!args.duration.empty()) sim.duration = parse_duration(args.duration);
  RunRecorders recorders(args, net, sim.duration >= 0 ? sim.duration : net.times.duration, quality);
  record_energy_and_output(sim, recorders.energy, recorders.out.get());
  if (quality) quality->attach(sim);  // after the recorders: it chains their hooks
  if (!args.export_dir.empty()) std::filesystem::create_directories(args.export_dir);
  sim.run.on_system = [&](long time, int trial, const JunctionSystem& system) {
    info.nnz = system.A.nnz();
    if (args.export_dir.empty()) return;
    const std::string when = time == 0 ? "" : "_t" + std::to_string(time);
    const std::string base =
        args.export_dir + "/" + stem(args.network) + when + "_trial" + std::to_string(trial);
    const std::string comment = "netsolve: " + stem(args.network) + ", time " +
                                std::to_string(time) + " s, gradient-algorithm trial " +
                                std::to_string(trial) + ", junction order of the .inp file";
    write_matrix_market(base + ".mtx", system.A, true, comment);
    write_vector_market(base + "_b.mtx", system.b, comment);
  };
  sim.run.trace = trace_time(args) >= 0;
  sim.run.threads = info.threads;
  // The results at every reporting time are kept for what reads them: the summary, the CSV
  // series, the reference comparison, the JSON report and EPANET's files; a quiet run that writes
  // none of them keeps none (a 25,000-junction network's 24 h: 35 MB).
  sim.keep_reports = !args.quiet || !args.nodes_csv.empty() || !args.links_csv.empty() ||
                     !args.tanks_csv.empty() || !args.reference_dir.empty() ||
                     !args.report.empty() || !args.rpt.empty() || !args.out_file.empty() ||
                     !args.quality_csv.empty();
  // Last: it adds to the hooks and to tracing; it reads the quality engine at reporting times.
  if (rpt) rpt->attach(sim, quality ? &quality->engine() : nullptr);
  SimulationResults s = simulate(net, solver, sim);
  energy = recorders.finish(s, out);
  return s;
}

// The summary (unless --quiet), the traced periods' trials, and the error line.
void print_results(const Args& args, const Network& net, const SimulationResults& s,
                   const LinearSolver& solver, const RunInfo& info) {
  if (!args.quiet) print_summary(net, s, solver, info);
  for (const StepReport& r : s.steps) {
    if (r.time != trace_time(args)) continue;
    std::printf("trials at %s:\n", clock_text(r.time).c_str());
    print_trials(net, r.solve);
  }
  if (!s.error.empty())
    std::fprintf(stderr, "netsolve: %s: %s\n", net.source.c_str(), s.error.c_str());
}

// Written whole, also when a period could not be solved: the reporting times up to it.
void write_series(const Args& args, const Network& net, const SimulationResults& s) {
  if (!args.nodes_csv.empty()) write_node_series_csv(args.nodes_csv, net, s);
  if (!args.links_csv.empty()) write_link_series_csv(args.links_csv, net, s);
  if (!args.tanks_csv.empty()) write_tank_series_csv(args.tanks_csv, net, s);
}

// The file's water quality beside the hydraulics (EPANET runs it whenever the file asks for it),
// unless --no-quality; --quality without any is refused.
std::unique_ptr<QualityRun> quality_run(const Args& args, const Network& net) {
  if (!net.quality.enabled() || args.no_quality) {
    if (!args.quality_csv.empty())
      throw InputError(net.source, 0,
                       args.no_quality ? "--quality and --no-quality together"
                                       : "--quality: the network has no water quality "
                                         "([OPTIONS] QUALITY NONE)");
    return nullptr;
  }
  return std::make_unique<QualityRun>(net, args.quality_hydraulics == "doubles"
                                               ? QualityHydraulics::doubles
                                               : QualityHydraulics::file);
}

int exit_code(const Network& net, const SimulationResults& s, bool reference_ok) {
  if (!s.error.empty() || !totals_of(s).linear_ok || !reference_ok) return kExitNotConverged;
  if (s.unbalanced) {
    warn_unbalanced(net, s);
    return kExitCompletedWithWarnings;
  }
  return s.completed ? kExitOk : kExitNotConverged;
}

// The .rpt, whole or not at all, its energy table from the run's EnergyReport. What [REPORT] asks
// that netsolve does not write is said, never faked: FILE's second report.
void write_rpt(const Args& args, const Network& net, const SimulationResults& s,
               EpanetReport& rpt, const EnergyReport& energy) {
  const EnergyTable table = energy_table(net, energy);
  if (!net.report.file.empty())
    std::fprintf(stderr, "netsolve: %s: [REPORT] FILE %s: not written (the report is %s)\n",
                 net.source.c_str(), net.report.file.c_str(), args.rpt.c_str());
  write_file_atomically(args.rpt, [&](std::FILE* f) { rpt.write(f, s, &table); });
}

// runepanet's third argument, the binary output file: what --out writes.
void set_out_file(Args& args, const std::string& path) {
  if (!args.out_file.empty())
    throw InputError("NET.inp NET.rpt " + path + ": and --out " + args.out_file + ": give one");
  args.out_file = path;
}

// runepanet's form, NET.inp NET.rpt [NET.out], beside --network and --rpt.
void resolve_positional(Args& args) {
  const auto& p = args.positional;
  if (p.empty()) {
    if (args.network.empty())
      throw InputError("no network: netsolve --network NET.inp ... or netsolve NET.inp NET.rpt");
    return;
  }
  if (!args.network.empty() || !args.rpt.empty())
    throw InputError("give the network and report either as NET.inp NET.rpt [NET.out] or as "
                     "--network/--rpt, not both");
  if (p.size() < 2) throw InputError("NET.inp NET.rpt [NET.out]: the report file is missing");
  args.network = p[0];
  args.rpt = p[1];
  if (p.size() > 2) set_out_file(args, p[2]);
}

int run(Args& args, SolverCli& cli) {
  resolve_positional(args);
  if (dist::launcher_world_size() > 1 && args.study.study.empty())
    throw InputError(
        "under mpirun netsolve spreads a --study's scenarios over the ranks; run a single "
        "network without mpirun");
  cli.resolve();
  if (cli.request.device_auto && dist::launcher_world_size() > 1)
    throw InputError("--device auto is not available under mpirun: give the ranks --device cpu "
                     "or gpu");
  const auto start = Clock::now();
  RunInfo info;
  const Network net = read_network(args);
  info.read_seconds = since(start);
  const SolveRequest request = network_request(cli.request, net);
  protect_files(args);
  if (!args.study.study.empty()) {
    if (!args.out_file.empty())
      throw InputError("--out writes one run's results as EPANET's output file: not with --study");
    // Scenario studies run the hydraulics only: said, never skipped silently.
    if (!args.quality_csv.empty()) throw InputError("--quality is not available with --study");
    if (net.quality.enabled() && !args.no_quality && !args.quiet)
      std::printf("note: the study runs the hydraulics only; the file's water quality is not "
                  "computed per scenario\n");
    if (!args.rpt.empty()) throw InputError("--rpt is written by a simulation, not by --study");
    return run_scenarios(args, net, request);
  }
  if (request.device_auto)
    info.device_choice =
        "device: cpu (--device auto: a single run stays on the host: the GPU's single-run path "
        "pays ~0.34 s of driver and context and was slower on every network it was measured "
        "on, BWSN_Network_2 24 h 0.54 s against the host's 0.16 s)";
  const std::unique_ptr<LinearSolver> solver = make_solver(args, net, request);
  info.threads = request.backend.threads > 0 ? request.backend.threads : omp_get_max_threads();
  solver->set_threads(info.threads);
  // The residuals of a direct solve are for the trial lines and the JSON report: one more pass
  // over A per trial where nothing prints them.
  solver->measure_residuals(!args.quiet || !args.report.empty() || trace_time(args) >= 0);
  EnergyReport energy;
  nlohmann::json out;  // --out: what was written
  std::unique_ptr<QualityRun> quality = quality_run(args, net);
  std::unique_ptr<EpanetReport> rpt;
  if (!args.rpt.empty()) rpt = std::make_unique<EpanetReport>(net, args.network);
  const SimulationResults s =
      simulate_network(args, net, *solver, info, energy, out, quality.get(), rpt.get());
  info.total_seconds = since(start);
  print_results(args, net, s, *solver, info);
  if (quality && !args.quiet) print_quality_summary(net, quality->results());
  write_series(args, net, s);
  if (quality && !args.quality_csv.empty())
    write_quality_csv(args.quality_csv, net, quality->results());
  nlohmann::json report = json_report(net, s, *solver, info);
  report["energy"] = json_energy(net, energy);
  if (!out.is_null()) report["out"] = out;
  if (quality) report["quality"] = quality_json(net, quality->results());
  const bool reference_ok = args.reference_dir.empty() || compare_reference(args, net, s, report);
  if (!args.report.empty()) write_file_atomically(args.report, report.dump(2) + "\n");
  if (rpt) write_rpt(args, net, s, *rpt, energy);
  return exit_code(net, s, reference_ok);
}

// --refine, --backward-error: how --solver cg's solves stop (network/README.md).
void add_refinement_options(CLI::App& app, RefinementOptions& refinement) {
  app.add_option("--refine", refinement.max_steps,
                 "Iterative refinement: at most this many CG solves per trial, x += CG(A, b - A x) "
                 "(1 = plain CG to --tol)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--backward-error", refinement.backward_error,
                 "Refine until the componentwise backward error max |b - Ax|_i / (|A||x| + |b|)_i "
                 "is this small, or stops improving")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

// --quality, --no-quality and --quality-hydraulics.
void add_quality_options(CLI::App& app, Args& args) {
  app.add_option("--quality", args.quality_csv,
                 "Write the water quality ([OPTIONS] QUALITY: AGE in hours, TRACE in percent, a "
                 "CHEMICAL in its units) of every node and link at every reporting time as CSV "
                 "(time_s,kind,id,quality; a link's is the mean over its segments, as EPANET's)");
  app.add_flag("--no-quality", args.no_quality,
               "Run the hydraulics alone, without the file's water quality");
  app.add_option("--quality-hydraulics", args.quality_hydraulics,
                 "The hydraulics the water quality routes on: file (default: flows and demands "
                 "rounded to float32, as runepanet's quality reads its hydraulics file) or doubles "
                 "(as EPANET's EN_runQ called beside EN_runH)")
      ->check(CLI::IsMember({"file", "doubles"}));
}

}  // namespace

int main(int argc, char** argv) {
  // Keep freed memory in the process (no mmap per large vector, no trimming): the reader's buffers
  // and each reporting time's results then reuse pages already mapped instead of faulting in fresh
  // ones (on a small machine a page fault costs microseconds: a quarter of a 24 h
  // BWSN_Network_2 run).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
  CLI::App app{
      "netsolve: EPANET network hydraulics over time (extended period) or at time 0, every "
      "trial's linear system solved by a sparse Cholesky factorisation or by CG"};
  Args args;
  SolverCli cli;
  TuningCli tuning_cli;
  cli.request.cg.tol = 1e-12;  // relative residual of the scaled system (network/README.md)
  cli.precond = "auto";        // with --solver cg: the network rule (with_network_rule)
  app.set_version_flag("--version", std::string("netsolve ") + CGSOLVE_VERSION);
  app.add_option("--network", args.network, "EPANET .inp file");
  app.add_option("files", args.positional,
                 "runepanet's form: NET.inp NET.rpt [NET.out] (the network, EPANET's report "
                 "file, its binary output file)")
      ->expected(0, 3);
  app.add_option("--rpt", args.rpt,
                 "Write EPANET's report file here, shaped by the network's [REPORT] section (as "
                 "runepanet writes it)");
  app.add_option("--duration", args.duration,
                 "Simulated time instead of the file's DURATION: EPANET's forms (24, 24:00, "
                 "\"24 HOURS\") or 24h, 90min, 1d, 86400s; 0 = the steady state at time 0");
  app.add_option("--solver", args.solver,
                 "Linear solver of each trial: direct (sparse Cholesky, --direct-backend) or cg "
                 "(cgsolve's CG, --format/--device/... apply; --precond auto, its default here, "
                 "is CG preconditioned by EPANET's own factor and started from its answer: the "
                 "direct path's results)")
      ->check(CLI::IsMember({"direct", "cg"}))
      ->capture_default_str();
  app.add_option("--direct-backend", args.direct_backend,
                 "The direct solver's factorisation: native (netsolve's own sparse Cholesky in "
                 "EPANET's order of operations; auto picks it), cholmod (SuiteSparse's, loaded "
                 "when asked for) or eigen (Eigen's SimplicialLDLT)")
      ->check(CLI::IsMember({"auto", "native", "cholmod", "eigen"}))
      ->capture_default_str();
  app.add_option("--elimination-order", args.elimination_order,
                 "The native direct solver eliminates the junctions in this order (a file of "
                 "junction IDs, one a line, each once) instead of its minimum degree order");
  add_solver_options(app, cli);
  add_demand_model_options(app, args.demand_model);
  app.add_option("--nodes", args.nodes_csv,
                 "Write node results at every reporting time as CSV "
                 "(time_s,node,head,pressure,demand,cut_off,required_demand,delivered_demand,"
                 "deficit,deficit_pct,leakage)");
  app.add_option("--links", args.links_csv,
                 "Write link results at every reporting time as CSV "
                 "(time_s,link,flow,headloss,status)");
  app.add_option(
      "--tanks", args.tanks_csv,
      "Write tank levels at every reporting time as CSV (time_s,tank,level,head,volume)");
  add_quality_options(app, args);
  app.add_option("--export-systems", args.export_dir,
                 "Write each trial's matrix (Matrix Market, symmetric) and right-hand side here");
  app.add_option("--report", args.report, "Write the run summary as JSON here");
  app.add_option("--out", args.out_file,
                 "Write EPANET's binary output file (.out: prolog, pump energy, every reporting "
                 "period's results, epilog) as runepanet does; none when a period cannot be "
                 "solved");
  app.add_option("--reference", args.reference_dir,
                 "Folder with EPANET's <net>_nodes.csv[.gz] and <net>_links.csv[.gz] (the "
                 "series, or time 0): compare every reporting time (exit 1 if heads differ by "
                 "more than 1e-3, flows by more than 1e-3, or a status)");
  add_refinement_options(app, args.refinement);
  app.add_option("--trace", args.trace,
                 "Print the trials of the period(s) at this time (as --duration) and the status "
                 "changes of each trial, as EPANET's STATUS FULL report (also with --quiet)");
  app.add_flag("--quiet", args.quiet, "Print nothing but errors");
  add_study_options(app, args.study);
  add_tuning_options(app, tuning_cli, false);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
  tuning_cli.apply();
  try {
    return run(args, cli);
  } catch (const InputError& e) {
    std::fprintf(stderr, "netsolve: %s\n", e.what());
    return kExitBadInput;
  } catch (const DeviceError& e) {
    std::fprintf(stderr, "netsolve: device unavailable: %s\n", e.what());
    return kExitDeviceUnavailable;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "netsolve: %s\n", e.what());
    return kExitBadInput;
  }
}
