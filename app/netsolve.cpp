// netsolve: an EPANET network in, its time-0 hydraulics out, every gradient-algorithm trial's
// linear system solved by a sparse Cholesky factorisation (--solver direct, the default) or by
// cgsolve's CG (--solver cg: any format, device, sorting). See network/README.md.
//
// Exit codes as cgsolve's: 0 converged, 1 not converged (hydraulics or a CG solve) or the
// equations could not be solved (EPANET's error 110), 2 bad input, 4 device unavailable.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/cli_options.hpp"
#include "formats/atomic_file.hpp"
#include "formats/matrix_market.hpp"
#include "formats/types.hpp"
#include "network/hydraulics.hpp"
#include "network/inp_reader.hpp"
#include "network/results_io.hpp"
#include "spmv/backend.hpp"

namespace {

using namespace cgs;
using namespace cgs::net;

struct Args {
  std::string network, nodes_csv, links_csv, export_dir, report;
  std::string reference_dir;      // EPANET's <net>_nodes.csv / _links.csv to compare with
  std::string solver = "direct";  // direct (sparse Cholesky) or cg
  bool quiet = false;
  RefinementOptions refinement;
};

std::string stem(const std::string& path) { return std::filesystem::path(path).stem().string(); }

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

void print_summary(const Network& net, const HydraulicResults& r, const LinearSolver& solver,
                   index_t nnz) {
  int tanks = 0, reservoirs = 0, pumps = 0, valves = 0;
  for (const Node& n : net.nodes)
    tanks += n.type == NodeType::tank, reservoirs += n.type == NodeType::reservoir;
  for (const Link& l : net.links)
    pumps += l.type == LinkType::pump, valves += l.type >= LinkType::prv;
  std::printf(
      "network %s: %d junctions, %d reservoirs, %d tanks, %zu links (%d pumps, %d valves)\n",
      net.source.c_str(), net.junction_count, reservoirs, tanks, net.links.size(), pumps, valves);
  std::printf("junction matrix: order %d, %d nonzeros (%.4f%% nonzero); linear solver %s\n",
              net.junction_count, nnz,
              100.0 * nnz / (double(net.junction_count) * std::max(1, net.junction_count)),
              solver.name().c_str());
  const AutotuneRecord a = solver.autotune();
  if (a.inspections > 0) std::printf("%s\n", describe_autotune(a, r.linear_seconds).c_str());
  std::printf("%5s %10s %5s %11s %12s %13s %13s %11s %11s\n", "trial", "CG iters", "solves",
              "solve (s)", "rel. change", "max dH", "max dQ", "scaled res.", "backw. err.");
  for (const TrialReport& t : r.trial_reports) {
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
  }
  long iterations = 0;
  for (const TrialReport& t : r.trial_reports) iterations += t.cg_iterations;
  if (!r.error.empty()) std::printf("ERROR: %s\n", r.error.c_str());
  std::printf("%s after %d trials (relative flow change %.3g, ACCURACY %g); %ld CG iterations\n",
              r.converged ? "converged" : "NOT CONVERGED", r.trials, r.relative_flow_change,
              net.options.accuracy, iterations);
  std::printf("time: %.4g s total, %.4g s in linear solves (%.1f%%), %.4g s in the rest\n",
              r.total_seconds, r.linear_seconds,
              r.total_seconds > 0 ? 100.0 * r.linear_seconds / r.total_seconds : 0.0,
              r.total_seconds - r.linear_seconds);
  if (!r.cut_off_nodes.empty()) {
    std::printf(
        "%zu junctions cut off from every reservoir and tank by closed links (heads not "
        "determined by the network):",
        r.cut_off_nodes.size());
    for (std::size_t i = 0; i < r.cut_off_nodes.size(); ++i)
      std::printf("%s %s", i ? "," : "", net.nodes[r.cut_off_nodes[i]].id.c_str());
    std::printf("\n");
  }
  for (const std::string& note : net.notes) std::printf("note: %s\n", note.c_str());
}

nlohmann::json json_report(const Network& net, const HydraulicResults& r, const LinearSolver& s,
                           index_t nnz) {
  nlohmann::json j;
  j["network"] = {{"file", net.source},
                  {"junctions", net.junction_count},
                  {"nodes", net.nodes.size()},
                  {"links", net.links.size()},
                  {"flow_units", to_string(net.units.flow_units)}};
  j["matrix"] = {{"order", net.junction_count}, {"nnz", nnz}};
  j["solver"] = {{"kind", s.kind()}, {"backend", s.backend()}, {"name", s.name()}};
  j["error"] = r.error;
  if (const AutotuneRecord a = s.autotune(); a.inspections > 0)
    j["autotune"] = {
        {"inspections", a.inspections},  {"reused_solves", a.reused},
        {"format", to_string(a.format)}, {"kernel", a.kernel},
        {"sort_rows", a.sort_rows},      {"reason", a.reason},
        {"seconds", a.seconds},          {"summary", describe_autotune(a, r.linear_seconds)}};
  j["converged"] = r.converged;
  j["trials"] = r.trials;
  j["relative_flow_change"] = r.relative_flow_change;
  j["total_seconds"] = r.total_seconds;
  j["linear_seconds"] = r.linear_seconds;
  nlohmann::json trials = nlohmann::json::array();
  for (const TrialReport& t : r.trial_reports) {
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
                      {"cg_converged", t.linear_converged}});
  }
  j["trial_reports"] = trials;
  nlohmann::json cut = nlohmann::json::array();
  for (int n : r.cut_off_nodes) cut.push_back(net.nodes[n].id);
  j["cut_off_nodes"] = cut;
  j["notes"] = net.notes;
  return j;
}

int run(const Args& args, SolverCli& cli) {
  cli.resolve();
  const Network net = read_inp(args.network);
  SolveRequest request = cli.request;
  if (request.cg.max_iters == 0)  // these systems need far more than 10 n iterations (README)
    request.cg.max_iters = std::max<long>(200000, 100L * net.junction_count);
  protect_input(args.network);
  if (!args.reference_dir.empty()) {
    const std::string base = args.reference_dir + "/" + stem(args.network);
    protect_input(base + "_nodes.csv");
    protect_input(base + "_links.csv");
  }
  const std::pair<const char*, const std::string*> outputs[] = {
      {"--nodes", &args.nodes_csv},
      {"--links", &args.links_csv},
      {"--report", &args.report},
      {"--export-systems", &args.export_dir}};
  for (const auto& [option, path] : outputs)
    if (!path->empty()) check_not_an_input(*path, option);
  auto solver =
      args.solver == "cg" ? make_cg_solver(request, args.refinement) : make_direct_solver();

  RunOptions run;
  index_t nnz = 0;
  if (!args.export_dir.empty()) std::filesystem::create_directories(args.export_dir);
  run.on_system = [&](int trial, const JunctionSystem& system) {
    nnz = system.A.nnz();
    if (args.export_dir.empty()) return;
    const std::string base =
        args.export_dir + "/" + stem(args.network) + "_trial" + std::to_string(trial);
    const std::string comment = "netsolve: " + stem(args.network) + ", gradient-algorithm trial " +
                                std::to_string(trial) + ", junction order of the .inp file";
    write_matrix_market(base + ".mtx", system.A, true, comment);
    write_vector_market(base + "_b.mtx", system.b, comment);
  };
  const HydraulicResults r = solve_hydraulics(net, *solver, run);
  if (!args.quiet) print_summary(net, r, *solver, nnz);
  if (!r.error.empty())
    std::fprintf(stderr, "netsolve: %s: %s\n", net.source.c_str(), r.error.c_str());
  if (!args.nodes_csv.empty()) write_nodes_csv(args.nodes_csv, net, r);
  if (!args.links_csv.empty()) write_links_csv(args.links_csv, net, r);
  bool reference_ok = true;
  nlohmann::json report = json_report(net, r, *solver, nnz);
  if (!args.reference_dir.empty()) {
    const std::string base = args.reference_dir + "/" + stem(args.network);
    const auto c = compare_with_reference(net, r, base + "_nodes.csv", base + "_links.csv", 1e-3,
                                          1e-3, flow_noise_floor(net));
    std::printf(
        "vs EPANET: %d nodes, %d links compared (%d cut off); max head error %.3g (%s), "
        "max flow error %.3g (%s): %s\n",
        c.nodes_compared, c.links_compared, c.cut_off_skipped, c.max_head_error,
        c.worst_node.c_str(), c.max_flow_error, c.worst_link.c_str(),
        c.ok() ? "match" : "MISMATCH");
    for (const auto& f : c.failures) std::printf("  %s\n", f.c_str());
    report["reference"] = {{"max_head_error", c.max_head_error},
                           {"max_flow_error", c.max_flow_error},
                           {"failures", c.failure_count}};
    reference_ok = c.ok();
  }
  if (!args.report.empty()) {
    write_file_atomically(args.report, report.dump(2) + "\n");
  }
  bool linear_ok = true;
  for (const TrialReport& t : r.trial_reports) linear_ok = linear_ok && t.linear_converged;
  return r.converged && linear_ok && reference_ok ? kExitOk : kExitNotConverged;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"netsolve: EPANET network hydraulics at time 0, linear systems solved by CG"};
  Args args;
  SolverCli cli;
  cli.request.cg.tol = 1e-12;  // relative residual of the scaled system (network/README.md)
  app.add_option("--network", args.network, "EPANET .inp file")->required();
  app.add_option("--solver", args.solver,
                 "Linear solver of each trial: direct (sparse Cholesky: CHOLMOD, or Eigen's "
                 "SimplicialLDLT without it) or cg (cgsolve's CG, --format/--device/... apply)")
      ->check(CLI::IsMember({"direct", "cg"}))
      ->capture_default_str();
  add_solver_options(app, cli);
  app.add_option("--nodes", args.nodes_csv, "Write node results (head, pressure, demand) as CSV");
  app.add_option("--links", args.links_csv, "Write link results (flow, head loss, status) as CSV");
  app.add_option("--export-systems", args.export_dir,
                 "Write each trial's matrix (Matrix Market, symmetric) and right-hand side here");
  app.add_option("--report", args.report, "Write the run summary as JSON here");
  app.add_option("--reference", args.reference_dir,
                 "Folder with EPANET's <net>_nodes.csv and <net>_links.csv: compare (exit 1 if "
                 "heads differ by more than 1e-3 or flows by more than 1e-3)");
  app.add_option("--refine", args.refinement.max_steps,
                 "Iterative refinement: at most this many CG solves per trial, x += CG(A, b - A x) "
                 "(1 = plain CG to --tol)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--backward-error", args.refinement.backward_error,
                 "Refine until the componentwise backward error max |b - Ax|_i / (|A||x| + |b|)_i "
                 "is this small, or stops improving")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--quiet", args.quiet, "Print nothing but errors");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  }
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
