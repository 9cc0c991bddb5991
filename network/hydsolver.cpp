// A period's trials on the host (EPANET's hydsolve): gga.hpp's assembly, flow update, status rules
// and end-of-trial decisions, with the linear solve through a LinearSolver, EPANET's error 110,
// the file-order retry, the trial reports and tracing.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "network/hydraulics.hpp"

namespace cgs::net {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// gga::assemble on a team: the head loss coefficients link by link (each link's are its own:
// they read the network and the link's state and write its P and Y), then the links' part of the
// system node by node (link_gather.hpp: each entry the same sum in the same order), then the rest
// on the caller. The numbers do not depend on the team's size.
void assemble_on(const gga::NetworkView& v, const gga::State& s, HostTeam* team,
                 const LinkGather& gather) {
  if (!team) return gga::assemble(v, s);
  auto coefficients = [&](int member) {
    int begin, end;
    HostTeam::share(v.o.links, member, team->size(), begin, end);
    for (int k = begin; k < end; ++k) gga::link_coefficients(v, s, k);
  };
  team->run(coefficients);
  auto links = [&](int member) {
    int begin, end;
    gather.share(member, team->size(), begin, end);
    gather.gather(v, s, begin, end);
  };
  team->run(links);
  gga::node_contributions(v, s);
}

}  // namespace

const JunctionSystem& GradientAlgorithm::assemble() {
  gga::assemble(view(), state());
  return system_;
}

gga::FlowChange GradientAlgorithm::update(const gga::NetworkView& v, gga::State& s,
                                          std::vector<double>& x, TrialReport& report) {
  report.max_head_change = 0;
  for (int i = 0; i < nj_; ++i)
    report.max_head_change = std::max(report.max_head_change, std::abs(x[i] - head_[i]));
  s.x = gga::Column{x.data(), 1};
  const gga::FlowChange change = gga::update(v, s);
  report.max_flow_change = change.largest;
  report.max_flow_link = change.largest_link;
  report.max_flow_node = change.largest_node;
  // The tanks' and reservoirs' net inflows, through the links not closed.
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) fixed_inflow_[i] = 0.0;
  for (std::size_t k = 0; k < flow_.size(); ++k) {
    if (is_closed(status(static_cast<int>(k)))) continue;
    const int from = v.from[k], to = v.to[k];
    if (from >= nj_) fixed_inflow_[from] -= flow_[k];
    if (to >= nj_) fixed_inflow_[to] += flow_[k];
  }
  return change;
}

void GradientAlgorithm::check_balance(const gga::NetworkView& v, const gga::State& s,
                                      TrialReport& report) {
  const std::vector<double> P = P_, Y = Y_;
  report.balance_checked = true;
  report.max_head_error = 0;
  report.max_head_link = 0;
  for (int k = 0; k < static_cast<int>(flow_.size()); ++k) {
    gga::link_coefficients(v, s, k);
    if (is_closed(status(k)) || P_[k] == 0.0) continue;
    const double dh = head_[v.from[k]] - head_[v.to[k]];
    const double error = std::abs(dh - Y_[k] / P_[k]);
    if (error > report.max_head_error) {
      report.max_head_error = error;
      report.max_head_link = k;
    }
  }
  P_ = P;
  Y_ = Y;
}

// As EPANET's hydsolve: a pivot <= 0 at the junction of an active control valve fixes that valve
// and repeats the trial (its count does not advance); anything else is error 110, unless the
// factorisation goes through in another elimination order (linear_solver.hpp).
bool GradientAlgorithm::solve_trial(LinearSolver& solver, const gga::NetworkView& v,
                                    const gga::State& s, std::vector<double>& x,
                                    TrialReport& report, PeriodSolve& out) {
  LinearSolveStats stats = solver.solve(system_.A, system_.b, x);
  int failed_junction = -1, fixed_valve = -1;
  if (stats.failed_row >= 0) {
    failed_junction = stats.failed_row;
    fixed_valve = gga::fix_bad_valve(v, s, failed_junction);
    if (fixed_valve < 0 && solver.solve_in_file_order(system_.A, system_.b, x, stats))
      report.file_order = true;
  }
  report.solve_seconds = stats.seconds;
  report.cg_iterations = stats.iterations;
  report.residual = stats.true_relative_residual;
  report.scaled_residual = stats.relative_residual;
  report.backward_error = stats.backward_error;
  report.refinement_steps = stats.refinement_steps;
  report.linear_converged = stats.converged;
  out.linear_seconds += stats.seconds;
  out.linear_iterations += stats.iterations;
  ++out.linear_solves;
  if (!report.file_order && failed_junction >= 0) {
    report.failed_junction = failed_junction;
    report.fixed_valve = fixed_valve;
    if (fixed_valve < 0)
      out.error =
          "cannot solve the hydraulic equations (EPANET error 110): the matrix is not "
          "positive definite at junction '" +
          net_.nodes[stats.failed_row].id + "' (trial " + std::to_string(report.trial) + ")";
    return false;
  }
  out.linear_converged = out.linear_converged && stats.converged;
  return true;
}

PeriodSolve GradientAlgorithm::solve_period(LinearSolver& solver, std::vector<double>& x, long time,
                                            const RunOptions& run) {
  const auto start = Clock::now();
  const gga::NetworkView v = view();
  gga::State s = state(x.data());
  const int max_trials = gga::trial_limit(v.o);
  int next_check = v.o.check_frequency;
  PeriodSolve out;
  s.relax = 1.0;
  double relerr = 1e10;
  bool converged = false;
  int trial = 1;
  std::vector<signed char> statuses_before;
  HostTeam* team = v.o.links >= run.parallel_links ? team_.get(run.threads) : nullptr;
  if (team && !gather_.built()) gather_.build(v, system_.A);
  while (trial <= max_trials) {
    TrialReport report;
    report.trial = trial;
    if (run.trace) statuses_before = status_;
    auto t0 = Clock::now();
    assemble_on(v, s, team, gather_);
    report.assemble_seconds = since(t0);
    if (run.on_system) run.on_system(time, trial, system_);
    if (trial == 1) solver.suggest_elimination_order(system_.elimination_order);
    if (!solve_trial(solver, v, s, x, report, out)) {
      out.trial_reports.push_back(report);
      if (report.fixed_valve >= 0) continue;
      break;
    }
    t0 = Clock::now();
    const gga::FlowChange change = update(v, s, x, report);
    relerr = change.relative;
    report.relative_flow_change = relerr;
    const bool valve_change = gga::damp_and_check_valves(v, s, relerr);
    if (run.trace && relerr <= opt_.accuracy) check_balance(v, s, report);
    // The accuracy as the file (or a study's warm start, study.cpp) sets it now.
    const bool flows_converged = gga::has_converged(v, s, change, opt_.accuracy) &&
                                 (!run.settled || run.settled(*this));
    const bool stop =
        gga::end_of_trial(v, s, trial, flows_converged, valve_change, next_check, converged);
    report.assemble_seconds += since(t0);
    if (run.trace)
      for (std::size_t k = 0; k < status_.size(); ++k)
        if (status_[k] != statuses_before[k]) {
          report.status_changes.emplace_back(static_cast<int>(k), status(static_cast<int>(k)));
          report.previous_statuses.push_back(static_cast<LinkStatus>(statuses_before[k]));
        }
    out.trial_reports.push_back(report);
    if (run.on_trial) run.on_trial(report);
    if (stop) break;
    ++trial;
  }
  out.converged = converged && out.error.empty();
  out.trials = std::min(trial, max_trials);
  out.demand_reduction = gga::demand_deficit(v, s, out.deficient_nodes);
  out.relative_flow_change = relerr;
  out.seconds = since(start);
  return out;
}

HydraulicResults solve_hydraulics(const Network& net, LinearSolver& solver, const RunOptions& run) {
  const auto start = Clock::now();
  check_connectivity(net);
  GradientAlgorithm state(net);
  state.initialise();
  state.start_period(0);
  std::vector<double> x(state.heads().begin(), state.heads().begin() + net.junction_count);
  PeriodSolve period = state.solve_period(solver, x, 0, run);
  HydraulicResults results = state.results();
  results.converged = period.converged;
  results.trials = period.trials;
  results.relative_flow_change = period.relative_flow_change;
  results.trial_reports = std::move(period.trial_reports);
  results.linear_seconds = period.linear_seconds;
  results.cut_off_nodes = cut_off_nodes(net, results.status);
  results.error = std::move(period.error);
  results.total_seconds = since(start);
  return results;
}

}  // namespace cgs::net
