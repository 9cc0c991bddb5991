// cgsolve/network.hpp over network/: the options parsed by netsolve's own definitions
// (app/cli_options.hpp, app/demand_model_options.hpp, app/netsolve_study.hpp), the run as
// app/netsolve.cpp makes it (its solver choice and request rules, a few lines each, are repeated
// here), the reporting times' results as network/results_io.cpp writes its CSVs, unrounded.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "api/api_common.hpp"
#include "app/cli_options.hpp"
#include "app/demand_model_options.hpp"
#include "app/netsolve_study.hpp"
#include "cgsolve/network.hpp"
#include "network/epanet_time.hpp"
#include "network/inp_reader.hpp"
#include "network/results_io.hpp"
#include "network/simulation.hpp"

namespace cgsolve::network {

struct Network::Impl {
  cgs::net::Network net;
};

Network::Network(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Network::~Network() = default;
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;

Network Network::from_file(const std::string& path) {
  return detail::translating([&] {
    return Network(std::make_unique<Impl>(Impl{cgs::net::read_inp(path)}));
  });
}

Network Network::from_string(const std::string& text, const std::string& name) {
  return detail::translating([&] {
    std::istringstream in(text);
    return Network(std::make_unique<Impl>(Impl{cgs::net::parse_inp(in, name)}));
  });
}

std::vector<std::string> Network::node_ids() const {
  std::vector<std::string> ids;
  for (const cgs::net::Node& n : impl_->net.nodes) ids.push_back(n.id);
  return ids;
}

std::vector<std::string> Network::link_ids() const {
  std::vector<std::string> ids;
  for (const cgs::net::Link& l : impl_->net.links) ids.push_back(l.id);
  return ids;
}

int Network::junction_count() const { return impl_->net.junction_count; }

namespace {

using namespace cgs::net;
using Clock = std::chrono::steady_clock;

// netsolve's options, as its main() defines them (defaults: --tol 1e-12, --precond auto).
struct Parsed {
  std::string duration, solver = "direct", direct_backend = "auto";
  cgs::SolverCli cli;
  RefinementOptions refinement;
  DemandModelFlags demand_model;
  StudyArgs study;
};

Parsed parse(const Options& o) {
  Parsed p;
  p.cli.request.cg.tol = 1e-12;
  p.cli.precond = "auto";
  CLI::App app;
  app.add_option("--duration", p.duration);
  app.add_option("--solver", p.solver)->check(CLI::IsMember({"direct", "cg"}));
  app.add_option("--direct-backend", p.direct_backend)
      ->check(CLI::IsMember({"auto", "native", "cholmod", "eigen"}));
  app.add_option("--refine", p.refinement.max_steps)->check(CLI::PositiveNumber);
  app.add_option("--backward-error", p.refinement.backward_error)
      ->check(CLI::NonNegativeNumber);
  cgs::add_solver_options(app, p.cli);
  add_demand_model_options(app, p.demand_model);
  add_study_options(app, p.study);
  detail::Args args = {{"--solver", o.solver}};
  if (!o.duration.empty()) args.push_back({"--duration", o.duration});
  if (!o.demand_model.empty()) args.push_back({"--demand-model", o.demand_model});
  args.insert(args.end(), o.more.begin(), o.more.end());
  detail::parse_args(app, args);
  p.cli.resolve();
  return p;
}

// app/netsolve.cpp's network_request: the trials' CG request.
cgs::SolveRequest trial_request(const Parsed& p, const cgs::net::Network& net) {
  cgs::SolveRequest request = p.cli.request;
  if (request.cg.max_iters == 0)
    request.cg.max_iters = std::max<long>(200000, 100L * net.junction_count);
  return request;
}

// app/netsolve.cpp's with_network_rule: --precond auto on a run's trials.
cgs::SolveRequest with_network_rule(cgs::SolveRequest request) {
  if (!request.precond.is("auto")) return request;
  request.precond = cgs::PrecondSpec{"chol", "order=given,pivot=fail", {}};
  if (request.backend.threads == 0) request.backend.threads = 1;
  return request;
}

DirectBackend direct_backend(const std::string& name) {
  if (name == "cholmod") return DirectBackend::cholmod;
  if (name == "eigen") return DirectBackend::eigen;
  if (name == "native") return DirectBackend::native;
  return DirectBackend::automatic;
}

std::unique_ptr<LinearSolver> make_solver(const Parsed& p, const cgs::SolveRequest& request) {
  return p.solver == "cg" ? make_cg_solver(with_network_rule(request), p.refinement)
                          : make_direct_solver(direct_backend(p.direct_backend));
}

double demand_deficit(double required, double delivered) {  // as results_io.cpp's
  return required > 0.0 ? std::max(required - delivered, 0.0) : 0.0;
}

void add_nodes(const cgs::net::Network& net, const Snapshot& snap, Results& r) {
  std::vector<std::uint8_t> cut(net.nodes.size(), 0);
  for (int n : snap.cut_off) cut[std::size_t(n)] = 1;
  for (std::size_t i = 0; i < net.nodes.size(); ++i) {
    const double required = snap.required_demand[i], delivered = snap.delivered_demand[i];
    const double deficit = demand_deficit(required, delivered);
    r.head.push_back(user_head(net, snap.head[i]));
    r.pressure.push_back(user_pressure(net, static_cast<int>(i), snap.head[i]));
    r.demand.push_back(user_flow(net, snap.demand[i]));
    r.cut_off.push_back(cut[i]);
    r.required_demand.push_back(user_flow(net, required));
    r.delivered_demand.push_back(user_flow(net, delivered));
    r.deficit.push_back(user_flow(net, deficit));
    r.deficit_pct.push_back(required > 0.0 ? 100.0 * deficit / required : 0.0);
    r.leakage.push_back(user_flow(net, snap.leakage[i]));
  }
}

void add_links(const cgs::net::Network& net, const Snapshot& snap, Results& r) {
  for (std::size_t k = 0; k < net.links.size(); ++k) {
    const Link& l = net.links[k];
    const bool closed = is_closed(snap.status[k]);
    const double dh = snap.head[std::size_t(l.from)] - snap.head[std::size_t(l.to)];
    r.flow.push_back(user_flow(net, snap.flow[k]));
    r.headloss.push_back(
        closed ? 0.0 : user_head(net, l.type == LinkType::pump ? dh : std::abs(dh)));
    r.open.push_back(closed ? 0 : 1);
  }
}

void add_tanks(const cgs::net::Network& net, const SimulationResults& s, const Snapshot& snap,
               Results& r) {
  for (std::size_t t = 0; t < s.tanks.size(); ++t) {
    const Node& tank = net.nodes[std::size_t(s.tanks[t])];
    const double head = snap.head[std::size_t(s.tanks[t])];
    r.level.push_back(user_head(net, head - tank.elevation));
    r.tank_head.push_back(user_head(net, head));
    r.volume.push_back(snap.volume[t] * net.units.volume);
  }
}

// The program's JSON report's run-level parts (app/netsolve.cpp's json_report: network, solver,
// series, steps, error, times).
std::string summary_json(const cgs::net::Network& net, const SimulationResults& s,
                         const LinearSolver& solver, double total_seconds) {
  nlohmann::json j;
  j["network"] = {{"file", net.source},
                  {"junctions", net.junction_count},
                  {"nodes", net.nodes.size()},
                  {"links", net.links.size()},
                  {"controls", net.controls.size()},
                  {"rules", net.rules.size()},
                  {"flow_units", to_string(net.units.flow_units)}};
  j["solver"] = {{"kind", solver.kind()}, {"backend", solver.backend()}, {"name", solver.name()}};
  int trials = 0, solves = 0;
  long iterations = 0;
  nlohmann::json steps = nlohmann::json::array();
  for (const StepReport& r : s.steps) {
    trials += r.solve.trials, solves += r.solve.linear_solves;
    iterations += r.solve.linear_iterations;
    steps.push_back({{"time_s", r.time},
                     {"length_s", r.length},
                     {"trials", r.solve.trials},
                     {"converged", r.solve.converged},
                     {"relative_flow_change", r.solve.relative_flow_change},
                     {"linear_solves", r.solve.linear_solves},
                     {"linear_iterations", r.solve.linear_iterations},
                     {"linear_seconds", r.solve.linear_seconds}});
  }
  j["series"] = {{"duration_s", s.duration},       {"steps", s.steps.size()},
                 {"reporting_times", s.reports.size()},
                 {"trials", trials},               {"linear_solves", solves},
                 {"linear_iterations", iterations}, {"completed", s.completed},
                 {"unbalanced", s.unbalanced},     {"error", s.error}};
  j["steps"] = steps;
  j["error"] = s.error;
  j["total_seconds"] = total_seconds;
  j["linear_seconds"] = s.linear_seconds;
  j["notes"] = net.notes;
  return j.dump();
}

Results collect(const cgs::net::Network& net, const SimulationResults& s) {
  Results r;
  for (const Node& n : net.nodes) r.node_ids.push_back(n.id);
  for (const Link& l : net.links) r.link_ids.push_back(l.id);
  for (int t : s.tanks) r.tank_ids.push_back(net.nodes[std::size_t(t)].id);
  const std::size_t times = s.reports.size(), nodes = times * net.nodes.size(),
                    links = times * net.links.size(), tanks = times * s.tanks.size();
  for (auto* v : {&r.head, &r.pressure, &r.demand, &r.required_demand, &r.delivered_demand,
                  &r.deficit, &r.deficit_pct, &r.leakage})
    v->reserve(nodes);
  r.cut_off.reserve(nodes);
  r.flow.reserve(links), r.headloss.reserve(links), r.open.reserve(links);
  r.level.reserve(tanks), r.tank_head.reserve(tanks), r.volume.reserve(tanks);
  for (const Snapshot& snap : s.reports) {
    r.times.push_back(snap.time);
    add_nodes(net, snap, r);
    add_links(net, snap, r);
    add_tanks(net, s, snap, r);
  }
  r.completed = s.completed;
  r.unbalanced = s.unbalanced;
  r.error = s.error;
  return r;
}

// Options::keep_freed_memory: glibc keeps what the run frees (no mmap per large vector, no
// trimming), as app/netsolve.cpp's main sets it for the program's whole life (a page fault per
// fresh page was a quarter of a 24 h BWSN_Network_2 run); glibc's documented defaults (128 KiB
// each) again after the run.
class KeptMemory {
 public:
  explicit KeptMemory(bool keep) : keep_(keep) {
    if (!keep_) return;
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
  }
  ~KeptMemory() {
    if (!keep_) return;
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024);
    mallopt(M_TOP_PAD, 128 * 1024);
  }
  KeptMemory(const KeptMemory&) = delete;
  KeptMemory& operator=(const KeptMemory&) = delete;

 private:
  bool keep_;
};

}  // namespace

Results run(const Network& network, const Options& options) {
  return detail::translating([&] {
    const KeptMemory kept(options.keep_freed_memory);
    const auto start = Clock::now();
    const Parsed p = parse(options);
    // The demand model's flags change a copy; without them the network is run as it was read.
    std::optional<cgs::net::Network> changed;
    if (p.demand_model.any()) {
      changed = network.impl().net;
      apply_demand_model_flags(p.demand_model, *changed);
    }
    const cgs::net::Network& net = changed ? *changed : network.impl().net;
    const std::unique_ptr<LinearSolver> solver = make_solver(p, trial_request(p, net));
    SimulationOptions sim;
    if (!p.duration.empty()) sim.duration = parse_duration(p.duration);
    const SimulationResults s = simulate(net, *solver, sim);
    Results r = collect(net, s);
    r.summary_json = summary_json(
        net, s, *solver, std::chrono::duration<double>(Clock::now() - start).count());
    return r;
  });
}

std::string study(const Network& network, const std::string& kind, const Options& options) {
  return detail::translating([&] {
    Options with_study = options;
    with_study.more.push_back({"--study", kind});
    const KeptMemory kept(options.keep_freed_memory);
    Parsed p = parse(with_study);
    cgs::net::Network net = network.impl().net;
    apply_demand_model_flags(p.demand_model, net);
    const cgs::SolveRequest request = trial_request(p, net);
    // As app/netsolve.cpp's run_scenarios, the CSV written to a file of our own and read back.
    const std::filesystem::path csv =
        std::filesystem::temp_directory_path() /
        ("cgsolve-study-" + std::to_string(::getpid()) + "-" +
         std::to_string(Clock::now().time_since_epoch().count()) + ".csv");
    p.study.csv = csv.string();
    StudyRunRequest run;
    run.threads = request.backend.threads;
    cgs::SolveRequest one = request;
    one.backend.threads = 1;
    run.gpu = one.backend.device == cgs::Device::gpu;
    const DirectBackend backend = direct_backend(p.direct_backend);
    const bool native = backend == DirectBackend::native || backend == DirectBackend::automatic;
    run.solver = p.solver == "cg" ? StudySolver::cg
                 : native         ? StudySolver::native_direct
                                  : StudySolver::other_direct;
    run.cg = one;
    run.refinement = p.refinement;
    cgs::SolveRequest baseline = one;
    if (baseline.backend.device == cgs::Device::gpu) baseline.backend.device = cgs::Device::omp;
    run_study_command(p.study, net, p.duration, run, "", true,
                      [&] { return make_solver(p, baseline); });
    std::ifstream in(csv, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::filesystem::remove(csv);
    return text;
  });
}

}  // namespace cgsolve::network
