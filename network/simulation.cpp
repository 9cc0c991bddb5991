#include "network/simulation.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>

#include "network/epanet_time.hpp"
#include "network/rules.hpp"

namespace cgs::net {
namespace {

constexpr double kZeroFlow = 1.0e-6;  // EPANET's QZERO

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// EPANET's ROUND: to the nearest integer, halves away from zero, held to the int range.
long round_seconds(double x) {
  if (!(x > INT_MIN)) return INT_MIN;  // NaN too, as EPANET
  if (x >= INT_MAX) return INT_MAX;
  return x >= 0 ? static_cast<long>(static_cast<int>(x + 0.5))
                : static_cast<long>(static_cast<int>(x - 0.5));
}

class Stepper {
 public:
  Stepper(const Network& net, GradientAlgorithm& state, const RuleEngine& rules,
          const SimulationOptions& options)
      : net_(net), state_(state), rules_(rules), options_(options) {}

  // EPANET's timestep(): the next step from `time`, with the tank levels (and rule actions) moved
  // over it. report_time: the next reporting time (EPANET's Rtime).
  long next_step(long time, long report_time) {
    const TimeOptions& t = net_.times;
    long step = t.hydraulic_step;
    // The next pattern period (EPANET counts it from PATTERN START but measures from the time
    // itself; kept as it is).
    const long period = (time + t.pattern_start) / t.pattern_step + 1;
    shorten(step, period * t.pattern_step - time);
    shorten(step, report_time - time);
    tank_step(step);
    control_step(time, step);
    if (rules_.empty())
      state_.tank_levels(step);
    else
      rule_step(time, step);
    return step;
  }

 private:
  const Network& net_;
  GradientAlgorithm& state_;
  const RuleEngine& rules_;
  const SimulationOptions& options_;

  static void shorten(long& step, long t) {
    if (t > 0 && t < step) step = t;
  }

  // EPANET's tanktimestep: the time for a tank to fill or empty at its current inflow.
  void tank_step(long& step) const {
    for (int i = net_.junction_count; i < static_cast<int>(net_.nodes.size()); ++i) {
      const Node& tank = net_.nodes[i];
      if (tank.type != NodeType::tank) continue;
      const double h = state_.head(i), q = state_.node_demand(i);
      if (std::abs(q) <= kZeroFlow) continue;
      double v;
      if (q > 0.0 && h < tank.max_head)
        v = tank.max_volume - state_.volume(i);
      else if (q < 0.0 && h > tank.min_head)
        v = tank.min_volume - state_.volume(i);
      else
        continue;
      const double t = v / q;
      if (std::abs(t) > step + 1) continue;  // 2.3: no overflow of the rounding below
      shorten(step, round_seconds(t));
    }
  }

  // EPANET's controltimestep: the time until a simple control comes due, if it would change its
  // link.
  void control_step(long time, long& step) const {
    for (const Control& c : net_.controls) {
      long t = 0;
      if (c.node >= 0) {
        if (net_.is_junction(c.node)) continue;  // pressure controls act within the trials
        const double h = state_.head(c.node), q = state_.node_demand(c.node);
        if (std::abs(q) <= kZeroFlow) continue;
        if ((h < c.grade && c.type == ControlType::high_level && q > 0.0) ||
            (h > c.grade && c.type == ControlType::low_level && q < 0.0)) {
          const double v = state_.tank_volume(c.node, c.grade) - state_.volume(c.node);
          t = round_seconds(v / q);
        }
      }
      if (c.type == ControlType::timer && c.time > time) t = c.time - time;
      if (c.type == ControlType::time_of_day) {
        const long now = (time + net_.times.start_clocktime) % 86400;
        t = c.time >= now ? c.time - now : 86400 - now + c.time;
      }
      if (t > 0 && t < step) {
        const Link& link = net_.links[c.link];
        if ((link.type > LinkType::pipe && state_.setting(c.link) != c.setting) ||
            state_.status(c.link) != c.status)
          step = t;
      }
    }
  }

  // EPANET's ruletimestep: through the step in rule time steps (the first one up to the next
  // multiple of RULE TIMESTEP), moving the tank levels and checking the rules; the step ends
  // where a rule changes a link.
  void rule_step(long time, long& step) const {
    const long end = time + step;
    long dt = std::min(net_.times.rule_step, step);
    long dt1 = std::min(net_.times.rule_step - time % net_.times.rule_step, step);
    if (dt1 == 0) dt1 = dt;
    long t = time;
    RuleEngine::ActionObserver on_rule;
    if (options_.on_rule) on_rule = [&](int link, int rule) { options_.on_rule(t, link, rule); };
    do {
      t += dt1;
      state_.tank_levels(dt1);
      if (rules_.check(state_, t, dt1, on_rule ? &on_rule : nullptr) > 0) break;
      dt = std::min(dt, end - t);
      dt1 = dt;
    } while (dt > 0);
    step = t - time;
  }
};

// The cut-off junctions depend on the statuses only (open or closed): a reporting time whose links
// are open and closed as at the one before reuses its answer instead of another search.
struct CutOffCache {
  std::vector<char> closed;
  std::vector<int> cut_off;
  bool valid = false;
};

Snapshot snapshot(const GradientAlgorithm& state, const NetworkGraph& graph,
                  const std::vector<int>& tanks, long time, CutOffCache& cache) {
  HydraulicResults r = state.results();
  Snapshot s;
  s.time = time;
  s.head = std::move(r.head);
  s.demand = std::move(r.demand);
  s.required_demand = std::move(r.required_demand);
  s.delivered_demand = std::move(r.delivered_demand);
  s.leakage = std::move(r.leakage);
  s.flow = std::move(r.flow);
  s.status = std::move(r.status);
  for (int n : tanks) s.volume.push_back(state.volume(n));
  std::vector<char> closed(s.status.size());
  for (std::size_t k = 0; k < s.status.size(); ++k) closed[k] = is_closed(s.status[k]);
  if (!cache.valid || closed != cache.closed) {
    cache.cut_off = graph.cut_off(s.status);
    cache.closed = std::move(closed);
    cache.valid = true;
  }
  s.cut_off = cache.cut_off;
  return s;
}

}  // namespace

bool is_report_time(const TimeOptions& times, long t) {
  return t >= times.report_start && (t - times.report_start) % times.report_step == 0;
}

SimulationWorkspace::SimulationWorkspace(const Network& network)
    : net((check_connectivity(network), network)), graph(net), state(net), rules(net) {}

SimulationResults simulate(const Network& net, LinearSolver& solver,
                           const SimulationOptions& options) {
  const auto start = Clock::now();
  SimulationWorkspace workspace(net);
  SimulationResults out = simulate(workspace, solver, options);
  out.seconds = since(start);
  return out;
}

SimulationResults simulate(SimulationWorkspace& workspace, LinearSolver& solver,
                           const SimulationOptions& options) {
  const auto start = Clock::now();
  const Network& net = workspace.net;
  const NetworkGraph& graph = workspace.graph;
  GradientAlgorithm& state = workspace.state;
  Stepper stepper(net, state, workspace.rules, options);
  CutOffCache cut_off_cache;
  SimulationResults out;
  out.duration = options.duration >= 0 ? options.duration : net.times.duration;
  for (int i = net.junction_count; i < static_cast<int>(net.nodes.size()); ++i)
    if (net.nodes[i].type == NodeType::tank) out.tanks.push_back(i);

  state.initialise();
  std::vector<double> x(state.heads().begin(), state.heads().begin() + net.junction_count);
  if (options.on_start) options.on_start(state, x);
  long time = 0, report_time = net.times.report_step;
  RunOptions run = options.run;
  GradientAlgorithm::ControlObserver on_control;
  long time_now = 0;
  if (options.on_control)
    on_control = [&](int link, int control) { options.on_control(time_now, link, control); };
  for (int step = 1;; ++step) {
    // EPANET's runhyd: the period at `time`.
    time_now = time;
    state.start_period(time, on_control ? &on_control : nullptr);
    StepReport report;
    report.time = time;
    if (options.on_trial) run.on_trial = [&](const TrialReport& t) { options.on_trial(time, t); };
    report.solve = state.solve_period(solver, x, time, run);
    out.linear_seconds += report.solve.linear_seconds;
    if (options.on_solved) options.on_solved(time, report.solve, state);
    if (!report.solve.error.empty()) {
      out.error = "at " + clock_text(time) + " (time " + std::to_string(time) + " s, step " +
                  std::to_string(step) + "): " + report.solve.error;
      out.error_time = time;
      out.steps.push_back(std::move(report));
      if (options.on_step) options.on_step(out.steps.back());
      break;
    }
    // EPANET's Haltflag: unbalanced with UNBALANCED STOP ends the run after this period.
    const bool halt = !report.solve.converged &&
                      report.solve.relative_flow_change > net.options.accuracy &&
                      net.options.extra_trials == -1;
    if (!report.solve.converged) out.unbalanced = true;
    if (options.on_period) options.on_period(time, state);
    if (options.keep_reports && is_report_time(net.times, time))
      out.reports.push_back(snapshot(state, graph, out.tanks, time, cut_off_cache));
    // EPANET's nexthyd: the step to the next period, tanks and rules moved over it.
    if (!halt && time < out.duration) report.length = stepper.next_step(time, report_time);
    if (options.on_advance) options.on_advance(time, report.length, state);
    out.steps.push_back(std::move(report));
    if (options.on_step) options.on_step(out.steps.back());
    if (halt || time >= out.duration) {
      out.completed = !halt && time >= out.duration;
      break;
    }
    time += out.steps.back().length;
    if (time >= report_time) report_time += net.times.report_step;
  }
  out.seconds = since(start);
  return out;
}

}  // namespace cgs::net
