// Scenario studies (study.hpp): the scenarios, the per-thread runners and the CSV.
#include "network/study.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <latch>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include "base/atomic_file.hpp"
#include "formats/types.hpp"
#include "network/simulation.hpp"

namespace cgs::net {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

double parse_number(const std::string& text, const std::string& what) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || !std::isfinite(value))
    throw InputError("--study", 0, what + " '" + text + "' is not a number");
  return value;
}

bool is_plain_pipe(LinkType type) { return type == LinkType::pipe; }

// What every scenario starts from: the baseline's time-0 solution (the warm start), and the
// baseline pressure of each junction (the available-flow search's point at zero fire flow).
struct Baseline {
  std::vector<double> flows, heads;  // per link; per junction
  std::vector<double> min_pressure;  // per junction, over the run
  bool solved = false;
};

// What one run of the (changed) network gave.
struct RunMeasure {
  bool ok = true;
  std::string reason;
  int trials = 0, periods = 0;
  double min_pressure = kNotMeasured;
  int min_node = -1;
  double watched_last = kNotMeasured;  // the watched junction's pressure at the last step
  double watched_min = kNotMeasured;   // and its lowest over the run
  int below_threshold = 0;
  int cut_off = 0;
  bool min_cut_off = false;  // the lowest junction was cut off at that step
  double deficit = 0;        // pressure-driven demand: % not delivered, at the worst step
};

// One thread's workspace: its own copy of the network (changed for one scenario at a time and
// restored), the simulation workspace built on that copy, and its linear solver.
class ScenarioRunner {
 public:
  ScenarioRunner(const Network& net, std::unique_ptr<LinearSolver> solver,
                 const StudyOptions& options, const Baseline& baseline)
      : net_(net),
        workspace_(net_),
        solver_(std::move(solver)),
        options_(options),
        baseline_(baseline),
        lowest_(net_.junction_count),
        cut_now_(net_.junction_count, 0),
        accuracy_(net.options.accuracy) {
    // Read at every junction after every period: out of the 168-byte Node records once.
    elevation_.reserve(static_cast<std::size_t>(net_.junction_count));
    for (int i = 0; i < net_.junction_count; ++i) elevation_.push_back(net_.nodes[i].elevation);
  }

  LinearSolver& solver() { return *solver_; }

  // The unmodified network; fills `out` with what later scenarios start from.
  ScenarioResult run_baseline(Baseline& out) {
    ScenarioResult r;
    const RunMeasure m = run_network(-1, &out);
    record(m, r);
    out.min_pressure = lowest_;
    return r;
  }

  // The trials engine's input for a steady-state scenario: the state its trials start from, as
  // run_network's first period begins (initial state, warm start, time 0's demands and
  // controls), and what the engine needs to know of it.
  void trial_start(int scenario, int element, double* start, signed char* status,
                   trials::ScenarioSpec& spec) {
    const std::function<void()> undo = change(scenario, element);
    try {
      trial_base(start, status);
    } catch (...) {
      undo();
      throw;
    }
    undo();
    spec = trials::ScenarioSpec{};
    if (options_.spec.kind == StudyKind::fireflow) spec.watched = element;
    if (warm())  // run_network's settling test (heads_settled)
      for (std::size_t j = 0; j < settle_nodes_.size() && j < 2; ++j) {
        spec.settle[j] = settle_nodes_[j];
        spec.settle_head[j] = baseline_.heads[settle_nodes_[j]];
      }
  }

  // The same start for net_ as it is (the unchanged network: what scenarios differ from).
  void trial_base(double* start, signed char* status) {
    GradientAlgorithm& state = workspace_.state;
    state.initialise();
    if (warm()) state.warm_start(baseline_.flows);
    state.start_period(0);
    state.export_trial_start(start, status);
  }

  // The row of a scenario the trials engine solved, as run_network measures a steady state.
  ScenarioResult trial_row(int scenario, int element, const trials::Outcome& o,
                           const signed char* status) {
    ScenarioResult r;
    r.scenario = scenario;
    r.element = element;
    RunMeasure m;
    m.trials = o.trials;
    m.periods = 1;
    m.min_pressure = o.min_pressure;
    m.min_node = o.min_node;
    m.below_threshold = o.below_threshold;
    m.deficit = o.deficit;
    statuses_.resize(net_.links.size());
    for (std::size_t k = 0; k < statuses_.size(); ++k)
      statuses_[k] = static_cast<LinkStatus>(status[k]);
    cut_off_.assign(net_.junction_count, 0);
    mark_cut_off(true);
    for (int i = 0; i < net_.junction_count; ++i) m.cut_off += cut_off_[i];
    m.min_cut_off = m.min_node >= 0 && cut_now_[m.min_node] != 0;
    record(m, r);
    if (options_.spec.kind == StudyKind::fireflow) r.element_pressure = o.watched_pressure;
    if (options_.spec.kind == StudyKind::closure) r.element_pressure = 0;
    return r;
  }

  // The trials' ACCURACY for a scenario (run_network's).
  double scenario_accuracy() const { return warm() ? accuracy_ * kWarmAccuracyFactor : accuracy_; }
  const GradientAlgorithm& structure() const { return workspace_.state; }
  const Network& network() const { return net_; }
  void set_warm_start(bool warm) { warm_start_ = warm; }
  // A probe of --start auto: the scenario's own row only (no available-flow search, which it does
  // not compare and which can take 60 runs).
  void set_probing(bool probing) { probing_ = probing; }

  ScenarioResult run_scenario(int scenario, int element) {
    ScenarioResult r;
    r.scenario = scenario;
    r.element = element;
    try {
      switch (options_.spec.kind) {
        case StudyKind::fireflow: run_fire_flow(r); break;
        case StudyKind::closure: run_closure(r); break;
        case StudyKind::demand: run_demand_draw(r); break;
      }
    } catch (const std::exception& e) {
      r.ok = false;
      r.reason = e.what();
    }
    return r;
  }

 private:
  Network net_;
  SimulationWorkspace workspace_;
  std::unique_ptr<LinearSolver> solver_;
  const StudyOptions& options_;
  const Baseline& baseline_;
  std::vector<double> lowest_;  // per junction, lowest pressure of the current run
  std::vector<char> cut_off_;   // per junction: cut off at some step of the current run
  std::vector<char> closed_, closed_before_;  // per link, this step's and the last search's
  std::vector<int> last_cut_off_;             // the last search's answer
  std::vector<char> cut_now_;                 // per junction: in last_cut_off_
  bool searched_ = false;
  std::vector<LinkStatus> statuses_;
  const double accuracy_;          // the file's ACCURACY
  std::vector<double> elevation_;  // per junction

  // A warm start's first trials see only the scenario's own change (one junction's fire flow, one
  // pipe), which EPANET's network-wide test sum |dQ| / sum |Q| <= ACCURACY undervalues: it stops
  // with that change half-solved (Modena_MOD, fire flow at 163: 1.5e-3 psi from EPANET's cold
  // answer at ACCURACY; 1e-4 with ACCURACY / 10, EPANET's own distance from the solution). So
  // warm-started runs converge to ACCURACY / 10: about 0.5 trials more (Exnet_EXN: 4.2 against
  // a cold start's 6.0). Only the first period: the later ones start from the period before, as
  // EPANET's do, and keep its ACCURACY (a tighter test there moves the tank levels off EPANET's).
  static constexpr double kWarmAccuracyFactor = 0.1;
  bool warm() const { return warm_start_ && baseline_.solved; }
  bool warm_start_ = options_.warm_start;
  bool probing_ = false;

  // The junctions of the scenario's own change (the fire-flow junction, a closed pipe's ends):
  // a warm-started first period also waits until the last trial moved their heads by less than
  // kSettledHead. EPANET's network-wide test can pass while the change is still being solved
  // (Exnet_EXN, fire flow at 1457: sum |dQ| / sum |Q| = 9e-5 after 5 trials with the hydrant's
  // head still moving 0.8 ft, its pressure 0.009 psi from EPANET's cold answer).
  std::vector<int> settle_nodes_;
  std::vector<double> settle_heads_;           // their heads after the last trial
  static constexpr double kSettledHead = 0.1;  // ft
  bool heads_settled(const GradientAlgorithm& state) const {
    for (std::size_t i = 0; i < settle_nodes_.size(); ++i)
      if (!(std::abs(state.head(settle_nodes_[i]) - settle_heads_[i]) <= kSettledHead))
        return false;
    return true;
  }

  double pressure(const GradientAlgorithm& state, int node) const {
    return (state.head(node) - elevation_[node]) * net_.units.pressure;
  }

  // One simulation of net_ as it is now. watched: a junction whose pressure is followed (-1:
  // none); capture: where the baseline's solution goes (nullptr for scenarios).
  RunMeasure run_network(int watched, Baseline* capture) {
    RunMeasure m;
    std::fill(lowest_.begin(), lowest_.end(), std::numeric_limits<double>::infinity());
    cut_off_.assign(net_.junction_count, 0);
    SimulationOptions sim;
    sim.duration = options_.duration;
    sim.keep_reports = false;
    const bool warm_start = warm() && !capture;
    net_.options.accuracy = warm_start ? accuracy_ * kWarmAccuracyFactor : accuracy_;
    sim.on_start = [&](GradientAlgorithm& state, std::vector<double>& x) {
      if (!warm_start) return;
      state.warm_start(baseline_.flows);
      x = baseline_.heads;
    };
    bool first_period = true;
    if (warm_start && !settle_nodes_.empty()) {
      settle_heads_.clear();
      for (int node : settle_nodes_) settle_heads_.push_back(baseline_.heads[node]);
      bool waited = false;  // one more trial at most: ill-conditioned zones never settle
      sim.run.settled = [&, waited](const GradientAlgorithm& state) mutable {
        if (!first_period || waited || heads_settled(state)) return true;
        return !(waited = true);
      };
      sim.on_trial = [&](long, const TrialReport&) {
        for (std::size_t i = 0; i < settle_nodes_.size(); ++i)
          settle_heads_[i] = workspace_.state.head(settle_nodes_[i]);
      };
    }
    sim.on_period = [&](long time, const GradientAlgorithm& state) {
      // Later periods start from the one before, as EPANET's: its own ACCURACY again.
      first_period = false;
      net_.options.accuracy = accuracy_;
      mark_cut_off(state, m.periods == 0);
      ++m.periods;
      double lowest =
          std::isnan(m.min_pressure) ? std::numeric_limits<double>::infinity() : m.min_pressure;
      for (int i = 0; i < net_.junction_count; ++i) {
        const double p = pressure(state, i);
        if (p < lowest) {  // the first junction of the lowest, as EPANET
          lowest = p, m.min_node = i;
          m.min_cut_off = cut_now_[i] != 0;
        }
        lowest_[i] = std::min(lowest_[i], p);
      }
      m.min_pressure = lowest;
      if (watched >= 0) {
        m.watched_last = pressure(state, watched);
        m.watched_min =
            std::isnan(m.watched_min) ? m.watched_last : std::min(m.watched_min, m.watched_last);
      }
      if (capture && time == 0) {
        capture->flows.resize(net_.links.size());
        for (std::size_t k = 0; k < net_.links.size(); ++k)
          capture->flows[k] = state.flow(static_cast<int>(k));
        capture->heads.assign(state.heads().begin(), state.heads().begin() + net_.junction_count);
        capture->solved = true;
      }
    };
    const SimulationResults s = simulate(workspace_, *solver_, sim);
    for (const StepReport& step : s.steps) {
      if (!step.solve.error.empty()) continue;
      m.trials += step.solve.trials;
      m.deficit = std::max(m.deficit, step.solve.demand_reduction);
      if (!step.solve.linear_converged && m.ok) {
        m.ok = false;
        m.reason = "a linear solve did not converge at " + std::to_string(step.time) + " s";
      }
    }
    if (!s.error.empty()) {
      m.ok = false;
      m.reason = s.error;
    } else if (m.ok && s.unbalanced) {
      int count = 0;
      for (const StepReport& step : s.steps) count += !step.solve.converged;
      m.reason = "warning: " + std::to_string(count) + " period(s) unbalanced" +
                 (s.completed ? "" : ", the run halted (UNBALANCED STOP)");
    }
    for (int i = 0; i < net_.junction_count; ++i) {
      m.below_threshold += lowest_[i] < options_.pressure_threshold;
      m.cut_off += cut_off_[i];
    }
    return m;
  }

  // Junctions joined to no reservoir or tank through open links at this step (their heads are
  // set by closed links' 1e-8 couplings, not by the network); searched again only when the
  // open/closed pattern of the links changed since the last search (of this run or an earlier
  // one: most scenarios end with the baseline's pattern).
  void mark_cut_off(const GradientAlgorithm& state, bool first_step) {
    statuses_.resize(net_.links.size());
    for (std::size_t k = 0; k < statuses_.size(); ++k)
      statuses_[k] = state.status(static_cast<int>(k));
    mark_cut_off(first_step);
  }

  // The same for the link statuses in statuses_.
  void mark_cut_off(bool first_step) {
    const std::size_t links = statuses_.size();
    closed_.resize(links);
    for (std::size_t k = 0; k < links; ++k) closed_[k] = is_closed(statuses_[k]);
    if (!searched_ || closed_ != closed_before_) {
      closed_before_ = closed_;
      for (int node : last_cut_off_) cut_now_[node] = 0;
      last_cut_off_ = workspace_.graph.cut_off(statuses_);
      for (int node : last_cut_off_) cut_now_[node] = 1;
      searched_ = true;
    } else if (!first_step) {
      return;  // nothing new since this run's last step
    }
    for (int node : last_cut_off_) cut_off_[node] = 1;
  }

  static void record(const RunMeasure& m, ScenarioResult& r) {
    r.cut_off = m.cut_off;
    r.min_cut_off = m.min_cut_off;
    r.demand_deficit = m.deficit;
    r.ok = m.ok;
    r.reason = m.reason;
    r.trials = m.trials;
    r.periods = m.periods;
    r.min_pressure = m.min_pressure;
    r.min_node = m.min_node;
    r.below_threshold = m.below_threshold;
  }

  // The scenario's change made to net_, with the junctions a warm start settles on
  // (settle_nodes_); the returned function undoes it.
  std::function<void()> change_fire_flow(int node, double flow) {
    settle_nodes_.assign(1, node);
    std::vector<Demand>& demands = net_.nodes[node].demands;
    const bool added = demands.empty();  // EPANET gives every junction a demand; kept safe
    if (added) demands.push_back(Demand{});
    const double saved = demands.front().base;
    demands.front().base = saved + flow;
    return [this, node, added, saved] {
      std::vector<Demand>& d = net_.nodes[node].demands;
      d.front().base = saved;
      if (added) d.pop_back();
    };
  }

  std::function<void()> change_closure(int k) {
    Link& link = net_.links[k];
    settle_nodes_.clear();
    for (int node : {link.from, link.to})
      if (net_.is_junction(node)) settle_nodes_.push_back(node);
    const LinkStatus saved = link.status;
    link.status = LinkStatus::closed;
    return [this, k, saved] { net_.links[k].status = saved; };
  }

  std::function<void()> change_demands(int scenario) {
    settle_nodes_.clear();  // every junction changes: EPANET's test alone
    const std::vector<double> factor =
        demand_multipliers(options_.spec.seed, scenario - 1, net_.junction_count, options_.spec.cv);
    std::vector<double> saved;
    for (int i = 0; i < net_.junction_count; ++i)
      for (Demand& d : net_.nodes[i].demands) saved.push_back(d.base), d.base *= factor[i];
    return [this, saved = std::move(saved)] {
      std::size_t k = 0;
      for (int i = 0; i < net_.junction_count; ++i)
        for (Demand& d : net_.nodes[i].demands) d.base = saved[k++];
    };
  }

  std::function<void()> change(int scenario, int element) {
    switch (options_.spec.kind) {
      case StudyKind::fireflow: return change_fire_flow(element, options_.fire_flow);
      case StudyKind::closure: return change_closure(element);
      case StudyKind::demand: break;
    }
    return change_demands(scenario);
  }

  // One run of the changed network, the change undone after it whatever happens.
  RunMeasure run_changed(const std::function<void()>& undo, int watched) {
    RunMeasure m;
    try {
      m = run_network(watched, nullptr);
    } catch (...) {
      undo();
      throw;
    }
    undo();
    return m;
  }

  // The fire flow at `node` set to `flow` (cfs) on top of its first demand category, one run.
  RunMeasure run_with_fire_flow(int node, double flow) {
    return run_changed(change_fire_flow(node, flow), node);
  }

  void run_fire_flow(ScenarioResult& r) {
    const RunMeasure m = run_with_fire_flow(r.element, options_.fire_flow);
    record(m, r);
    r.element_pressure = m.watched_last;
    if (options_.residual_pressure >= 0 && !probing_) available_flow(r, m);
  }

  // The largest fire flow at the hydrant whose pressure stays at or above the residual pressure
  // over the run: regula falsi (Illinois) on u = Q^1.852, in which the hydrant's pressure is
  // close to linear (p ~ p0 - k Q^1.852 for Hazen-Williams losses), bracketed by the baseline
  // (Q = 0) and the study's fire flow, doubled until the pressure falls below the residual. A run
  // that fails counts as below. Stops within 0.001 pressure units of the residual, or a bracket
  // of 1e-6 relative width, or 60 runs.
  void available_flow(ScenarioResult& r, const RunMeasure& at_fire_flow) {
    const double target = options_.residual_pressure;
    const double p0 = baseline_.solved ? baseline_.min_pressure[r.element] : -1e300;
    auto excess = [&](const RunMeasure& m) {
      return m.ok && !std::isnan(m.watched_min) ? m.watched_min - target : -1e300;
    };
    if (!(p0 >= target)) {
      r.available_flow = 0;
      return;
    }
    constexpr double kExponent = 1.852;
    double q_lo = 0, f_lo = p0 - target;
    double q_hi = options_.fire_flow, f_hi = excess(at_fire_flow);
    int runs = 0;
    for (int doubling = 0; f_hi >= 0 && doubling < 30; ++doubling, ++runs) {
      q_lo = q_hi, f_lo = f_hi;
      q_hi *= 2;
      f_hi = excess(run_with_fire_flow(r.element, q_hi));
    }
    if (f_hi >= 0) {  // still above at 2^30 times the fire flow: report that, a lower bound
      r.available_flow = q_hi * net_.units.flow;
      r.available_flow_runs = runs;
      return;
    }
    double u_lo = std::pow(q_lo, kExponent), u_hi = std::pow(q_hi, kExponent);
    int side = 0;  // Illinois: which end stayed twice in a row
    double best = q_lo;
    for (; runs < 60; ++runs) {
      const bool secant_ok = f_hi > -1e299;
      double u = secant_ok ? u_hi - f_hi * (u_hi - u_lo) / (f_hi - f_lo) : 0.5 * (u_lo + u_hi);
      if (!(u > u_lo && u < u_hi)) u = 0.5 * (u_lo + u_hi);
      const double q = std::pow(u, 1.0 / kExponent);
      const double f = excess(run_with_fire_flow(r.element, q));
      if (f >= 0) {
        best = q;
        u_lo = u, f_lo = f;
        if (side == -1 && secant_ok) f_hi *= 0.5;
        side = -1;
      } else {
        u_hi = u, f_hi = f;
        if (side == 1) f_lo *= 0.5;
        side = 1;
      }
      if (std::abs(f) <= 1e-3 ||
          std::pow(u_hi, 1.0 / kExponent) - std::pow(u_lo, 1.0 / kExponent) <= 1e-6 * q) {
        if (std::abs(f) <= 1e-3) best = q;
        ++runs;
        break;
      }
    }
    r.available_flow = best * net_.units.flow;
    r.available_flow_runs = runs;
  }

  void run_closure(ScenarioResult& r) {
    record(run_changed(change_closure(r.element), -1), r);
    r.element_pressure = 0;  // as epanet-scenarios: no element pressure for a pipe
  }

  void run_demand_draw(ScenarioResult& r) {
    record(run_changed(change_demands(r.scenario), -1), r);
  }
};

// The scenarios' elements: the listed ones, or every junction / pipe.
std::vector<int> study_elements(const Network& net, const StudyOptions& options) {
  if (!options.elements.empty()) return options.elements;
  std::vector<int> out;
  if (options.spec.kind == StudyKind::fireflow)
    for (int i = 0; i < net.junction_count; ++i) out.push_back(i);
  if (options.spec.kind == StudyKind::closure)
    for (std::size_t k = 0; k < net.links.size(); ++k)
      if (is_plain_pipe(net.links[k].type)) out.push_back(static_cast<int>(k));
  if (options.spec.kind == StudyKind::demand)
    out.assign(static_cast<std::size_t>(options.spec.draws), -1);
  return out;
}

int thread_count(int asked, std::size_t scenarios) {
  int n = asked > 0 ? asked : static_cast<int>(std::thread::hardware_concurrency());
  n = std::max(1, n);
  return static_cast<int>(std::min<std::size_t>(n, std::max<std::size_t>(1, scenarios)));
}

std::string format_number(double v) {
  if (std::isnan(v)) return "";
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return quoted + "\"";
}

// f(thread, i) for i in 0..count-1 on `threads` threads (the caller's among them), indices taken
// in order; the first exception is rethrown once every thread is done.
template <typename F>
void for_each_index(int threads, int count, F&& f) {
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&](int t) {
    try {
      for (int i; (i = next++) < count;) f(t, i);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min(threads, count); ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

bool rows_agree(const ScenarioResult& a, const ScenarioResult& b) {
  auto close = [](double x, double y) {
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) == std::isnan(y);
    return std::abs(x - y) <= kStartProbeTolerance * std::max(1.0, std::abs(y));
  };
  return a.ok == b.ok && a.min_node == b.min_node && close(a.min_pressure, b.min_pressure) &&
         close(a.element_pressure, b.element_pressure) && a.cut_off == b.cut_off;
}

// StudyOptions::start_probe: `probes` scenarios spread over the study, each run warm and cold on
// `runner`. Warm where every pair of rows agrees and warm takes at least 10% fewer trials in all:
// both reach EPANET's answer then and warm gets there sooner; otherwise EPANET's own path.
bool choose_warm_start(ScenarioRunner& runner, const std::vector<int>& elements, int probes,
                       std::string& note) {
  if (runner.network().options.demand.model == DemandModel::pda) {
    // PDA's test on delivered demands (1e-4 cfs) leaves its answers path-dependent to ~1e-3
    // (Fossolo_FOS closures: warm and cold 1.1e-3 apart where the probes agreed): EPANET's path.
    runner.set_warm_start(false);
    note = "cold, EPANET's own path (pressure-driven demand: its answers depend on the path)";
    return false;
  }
  const int total = static_cast<int>(elements.size());
  probes = std::min(probes, total);
  long warm_trials = 0, cold_trials = 0;
  int differ = 0;
  runner.set_probing(true);
  for (int p = 0; p < probes; ++p) {
    const int i = static_cast<int>(static_cast<long>(p) * total / probes);
    runner.set_warm_start(true);
    const ScenarioResult warm = runner.run_scenario(i + 1, elements[i]);
    runner.set_warm_start(false);
    const ScenarioResult cold = runner.run_scenario(i + 1, elements[i]);
    warm_trials += warm.trials, cold_trials += cold.trials;
    differ += !rows_agree(warm, cold);
  }
  runner.set_probing(false);
  const bool keep_warm = differ == 0 && 10 * warm_trials <= 9 * cold_trials;
  runner.set_warm_start(keep_warm);
  char text[200];
  std::snprintf(text, sizeof text,
                "%s (%d probe scenarios: warm %.2f trials each, cold %.2f; %d whose rows differ)",
                keep_warm ? "warm, from the baseline's solution" : "cold, EPANET's own path",
                probes, double(warm_trials) / std::max(1, probes),
                double(cold_trials) / std::max(1, probes), differ);
  note = text;
  return keep_warm;
}

// Why this study cannot run on the trials engine, or empty.
std::string trials_study_limits(const Network& net, const StudyOptions& options) {
  const long duration = options.duration >= 0 ? options.duration : net.times.duration;
  if (duration != 0) return "it runs steady-state studies only (--duration 0)";
  if (options.residual_pressure >= 0) return "the available-flow search runs on the host";
  return trial_engine_limits(net);
}

// One call's scenarios as the trials engine takes them: each the common start with a few changes.
// Each scenario's lists are written by the thread that prepared it; flatten() joins them.
struct ChunkChanges {
  std::vector<std::vector<int>> index, status_index;
  std::vector<std::vector<double>> value;
  std::vector<std::vector<signed char>> status_value;
  std::vector<long> ptr, status_ptr;
  std::vector<int> flat_index, flat_status_index;
  std::vector<double> flat_value;
  std::vector<signed char> flat_status_value;

  explicit ChunkChanges(int count)
      : index(count), status_index(count), value(count), status_value(count) {}

  // Scenario i's start and statuses against the common ones: the entries whose bits differ.
  void record(int i, const std::vector<double>& base, const std::vector<signed char>& base_status,
              const std::vector<double>& start, const std::vector<signed char>& status) {
    index[i].clear(), value[i].clear(), status_index[i].clear(), status_value[i].clear();
    for (std::size_t k = 0; k < start.size(); ++k)
      if (std::memcmp(&start[k], &base[k], sizeof(double)) != 0)
        index[i].push_back(static_cast<int>(k)), value[i].push_back(start[k]);
    for (std::size_t k = 0; k < status.size(); ++k)
      if (status[k] != base_status[k])
        status_index[i].push_back(static_cast<int>(k)), status_value[i].push_back(status[k]);
  }

  trials::StartChanges flatten(int count) {
    ptr.assign(1, 0), status_ptr.assign(1, 0);
    flat_index.clear(), flat_value.clear(), flat_status_index.clear(), flat_status_value.clear();
    for (int i = 0; i < count; ++i) {
      flat_index.insert(flat_index.end(), index[i].begin(), index[i].end());
      flat_value.insert(flat_value.end(), value[i].begin(), value[i].end());
      flat_status_index.insert(flat_status_index.end(), status_index[i].begin(),
                               status_index[i].end());
      flat_status_value.insert(flat_status_value.end(), status_value[i].begin(),
                               status_value[i].end());
      ptr.push_back(static_cast<long>(flat_index.size()));
      status_ptr.push_back(static_cast<long>(flat_status_index.size()));
    }
    return {ptr.data(),        flat_index.data(),        flat_value.data(),
            status_ptr.data(), flat_status_index.data(), flat_status_value.data()};
  }
};

// The study on the trials engine (StudyOptions::trial_engine): chunk after chunk, the host
// threads write every scenario's start as its changes of the unchanged network's, the engine runs
// their trials, the threads read the rows (and run on the host any scenario the engine handed
// back). What the host holds per call is the changes and the final statuses, so memory and set-up
// do not grow with the study beyond the engine's capacity.
void run_on_trial_engine(const StudyOptions& options, const std::vector<int>& elements,
                         std::vector<std::unique_ptr<ScenarioRunner>>& runners,
                         const std::function<std::unique_ptr<ScenarioRunner>()>& make_runner,
                         StudyResults& out, Clock::time_point start) {
  ScenarioRunner& first = *runners[0];
  const std::unique_ptr<TrialNetwork> network = build_trial_network(
      first.network(), first.structure(), first.scenario_accuracy(), options.pressure_threshold);
  // Warm-started scenarios take about the baseline's trials (BWSN_Network_2: 10 and 10.0); half
  // as many again, at least 3 more, before a straggler goes to the host.
  const int baseline_trials = std::max(1, out.baseline.trials);
  network->view.o.trial_budget = options.trial_budget >= 0
                                     ? options.trial_budget
                                     : std::max(baseline_trials + 3, (3 * baseline_trials + 1) / 2);
  const std::unique_ptr<BatchTrials> engine = options.trial_engine(*network);
  const trials::Layout layout = network->layout();
  std::vector<double> base(static_cast<std::size_t>(layout.start()));
  std::vector<signed char> base_status(static_cast<std::size_t>(layout.links));
  first.trial_base(base.data(), base_status.data());
  engine->set_base(base.data(), base_status.data());
  const int total = static_cast<int>(elements.size());
  const int chunk =
      std::min(total, options.trial_chunk > 0 ? options.trial_chunk : engine->capacity());
  const int threads = out.threads;
  runners.resize(static_cast<std::size_t>(threads));
  for_each_index(threads, threads, [&](int, int t) {
    if (!runners[t]) runners[t] = make_runner();
  });
  std::vector<std::vector<double>> scratch(static_cast<std::size_t>(threads), base);
  std::vector<std::vector<signed char>> scratch_status(static_cast<std::size_t>(threads),
                                                       base_status);
  ChunkChanges changes(chunk);
  std::vector<signed char> final_statuses(static_cast<std::size_t>(chunk) * layout.links);
  std::vector<trials::ScenarioSpec> specs(static_cast<std::size_t>(chunk));
  std::vector<trials::Outcome> outcomes(static_cast<std::size_t>(chunk));
  out.setup_seconds = since(start);
  const auto scenarios_start = Clock::now();
  std::mutex progress_mutex;
  int done = 0, failed = 0;
  for (int first_index = 0; first_index < total; first_index += chunk) {
    const int count = std::min(chunk, total - first_index);
    for_each_index(threads, count, [&](int t, int i) {
      runners[t]->trial_start(first_index + i + 1, elements[first_index + i], scratch[t].data(),
                              scratch_status[t].data(), specs[i]);
      changes.record(i, base, base_status, scratch[t], scratch_status[t]);
    });
    engine->run(changes.flatten(count), specs.data(), count, outcomes.data(),
                final_statuses.data());
    ++out.trial_calls;
    out.trial_kernel_ms += engine->kernel_ms();
    out.trial_call_ms += engine->call_ms();
    for_each_index(threads, count, [&](int t, int i) {
      const int index = first_index + i;
      ScenarioResult& row = out.scenarios[index];
      const bool host = outcomes[i].needs_host != 0;
      row = host ? runners[t]->run_scenario(index + 1, elements[index])
                 : runners[t]->trial_row(index + 1, elements[index], outcomes[i],
                                         final_statuses.data() + i * layout.links);
      const std::lock_guard<std::mutex> lock(progress_mutex);
      out.host_scenarios += host;
      ++done;
      failed += !row.ok;
      if (options.on_progress) options.on_progress(done, total, failed);
    });
  }
  out.scenario_seconds = since(scenarios_start);
}

}  // namespace

std::string to_string(StudyKind kind) {
  switch (kind) {
    case StudyKind::fireflow: return "fireflow";
    case StudyKind::closure: return "closure";
    case StudyKind::demand: return "demand";
  }
  return "?";
}

StudySpec parse_study(const std::string& text) {
  StudySpec spec;
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  if (parts.empty()) parts.push_back("");
  if (parts[0] == "fireflow" || parts[0] == "closure") {
    if (parts.size() > 1)
      throw InputError("--study", 0, "'" + parts[0] + "' takes no arguments (got '" + text + "')");
    spec.kind = parts[0] == "fireflow" ? StudyKind::fireflow : StudyKind::closure;
    return spec;
  }
  if (parts[0] != "demand")
    throw InputError("--study", 0,
                     "unknown study '" + text + "' (fireflow, closure or demand:N[:cv[:seed]])");
  if (parts.size() < 2 || parts.size() > 4)
    throw InputError("--study", 0, "'" + text + "': demand:N[:cv[:seed]] expected");
  spec.kind = StudyKind::demand;
  const double draws = parse_number(parts[1], "the number of draws");
  if (draws < 1 || draws != std::floor(draws) || draws > 1e8)
    throw InputError("--study", 0,
                     "the number of draws must be a whole number >= 1, not '" + parts[1] + "'");
  spec.draws = static_cast<int>(draws);
  if (parts.size() > 2) spec.cv = parse_number(parts[2], "the coefficient of variation");
  if (spec.cv < 0 || spec.cv > 10)
    throw InputError("--study", 0,
                     "the coefficient of variation must be in [0, 10], not '" + parts[2] + "'");
  if (parts.size() > 3) {
    const double seed = parse_number(parts[3], "the seed");
    if (seed < 0 || seed != std::floor(seed) || seed > 9.0e15)
      throw InputError("--study", 0,
                       "the seed must be a whole number >= 0, not '" + parts[3] + "'");
    spec.seed = static_cast<std::uint64_t>(seed);
  }
  return spec;
}

std::vector<int> read_study_elements(const std::string& path, const Network& net, StudyKind kind) {
  if (kind == StudyKind::demand)
    throw InputError(path, 0, "--elements applies to fireflow and closure studies only");
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot open the --elements file");
  std::vector<int> out;
  long line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    const std::string id = trim(line.substr(0, line.find(';')));
    if (id.empty()) continue;
    if (kind == StudyKind::fireflow) {
      const int node = net.find_node(id);
      if (node < 0)
        throw InputError(path, line_number, "'" + id + "' is not a node of " + net.source);
      if (!net.is_junction(node))
        throw InputError(path, line_number,
                         "'" + id + "' is a " + to_string(net.nodes[node].type) +
                             ", not a junction: fire flow is studied at junctions");
      out.push_back(node);
    } else {
      const int link = net.find_link(id);
      if (link < 0)
        throw InputError(path, line_number, "'" + id + "' is not a link of " + net.source);
      if (!is_plain_pipe(net.links[link].type))
        throw InputError(path, line_number,
                         "'" + id + "' is a " + to_string(net.links[link].type) +
                             ", not a pipe: closure is studied on pipes");
      out.push_back(link);
    }
  }
  if (out.empty()) throw InputError(path, line_number, "no element IDs in the --elements file");
  return out;
}

std::vector<double> demand_multipliers(std::uint64_t seed, int index, int junctions, double cv) {
  std::seed_seq seeds{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                      static_cast<std::uint32_t>(index)};
  std::mt19937_64 generator(seeds);
  // Uniform in (0, 1] from the top 53 bits: the same numbers with any standard library (the
  // std::*_distribution classes are not specified bit for bit).
  auto uniform = [&] { return (static_cast<double>(generator() >> 11) + 1.0) * 0x1.0p-53; };
  const double sigma = std::sqrt(std::log1p(cv * cv)), mu = -0.5 * sigma * sigma;
  constexpr double kTwoPi = 6.283185307179586;
  std::vector<double> out(static_cast<std::size_t>(std::max(0, junctions)));
  for (std::size_t i = 0; i < out.size(); i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(uniform())), angle = kTwoPi * uniform();
    out[i] = std::exp(mu + sigma * radius * std::cos(angle));
    if (i + 1 < out.size()) out[i + 1] = std::exp(mu + sigma * radius * std::sin(angle));
  }
  return out;
}

int StudyResults::failed() const {
  return static_cast<int>(
      std::count_if(scenarios.begin(), scenarios.end(), [](const auto& r) { return !r.ok; }));
}

StudyResults run_study(const Network& net,
                       const std::function<std::unique_ptr<LinearSolver>()>& make_solver,
                       const StudyOptions& options) {
  const auto start = Clock::now();
  const std::vector<int> elements = study_elements(net, options);
  if (elements.empty())
    throw InputError(
        net.source, 0,
        "nothing to study: the network has no " +
            std::string(options.spec.kind == StudyKind::fireflow ? "junction" : "pipe"));
  StudyResults out;
  out.threads = thread_count(options.threads, elements.size());
  Baseline baseline;
  std::vector<std::unique_ptr<ScenarioRunner>> runners;
  // The rows read no residuals: the direct solvers skip measuring them (clones inherit it).
  auto make_quiet_solver = [&] {
    std::unique_ptr<LinearSolver> solver = make_solver();
    solver->measure_residuals(false);
    return solver;
  };
  runners.push_back(std::make_unique<ScenarioRunner>(net, make_quiet_solver(), options, baseline));
  out.baseline = runners[0]->run_baseline(baseline);
  bool warm = options.warm_start && baseline.solved;
  if (warm && options.start_probe > 0)
    warm = choose_warm_start(*runners[0], elements, options.start_probe, out.start_note);
  out.warm_start = warm;
  runners[0]->set_warm_start(warm);
  // Every other runner starts as chosen (ScenarioRunner reads warm_start from its options).
  StudyOptions chosen = options;
  chosen.warm_start = warm;
  if (options.trial_engine) {
    out.engine_note = trials_study_limits(net, options);
    if (out.engine_note.empty()) {
      out.scenarios.resize(elements.size());
      run_on_trial_engine(
          options, elements, runners,
          [&] {
            std::unique_ptr<LinearSolver> copy = runners[0]->solver().clone_analysed();
            if (!copy) {
              static std::mutex make_mutex;  // make_solver need not be thread-safe
              const std::lock_guard<std::mutex> lock(make_mutex);
              copy = make_quiet_solver();
            }
            return std::make_unique<ScenarioRunner>(net, std::move(copy), chosen, baseline);
          },
          out, start);
      out.solver_name = runners[0]->solver().name();
      return out;
    }
  }
  // The batched engine's members meet in groups, each with its own rendezvous and engine: two
  // for the batched Cholesky, so that one group's threads run their trials on the cores while
  // the other group's batch is on the device (a member waits only for its own group).
  std::vector<std::shared_ptr<BatchRendezvous>> batches;
  if (options.batch_engine) {
    const int in_flight = options.batch_size > 0 ? options.batch_size
                          : options.batch_direct ? kDefaultDirectBatchSize
                                                 : kDefaultBatchSize;
    out.threads = thread_count(in_flight, elements.size());
    const int groups = options.batch_direct && out.threads >= 2 ? 2 : 1;
    for (int g = 0; g < groups; ++g)
      batches.push_back(std::make_shared<BatchRendezvous>(
          options.batch_engine(), out.threads / groups + (g < out.threads % groups)));
  }
  // Thread t's group (null: not batched).
  auto batch_of = [&](int t) { return batches.empty() ? nullptr : batches[t % batches.size()]; };
  // A member of the batch: a runner whose solver hands its systems to its group's rendezvous.
  auto make_member = [&](int t) {
    return std::make_unique<ScenarioRunner>(
        net,
        options.batch_direct ? make_batch_direct_member_solver(batch_of(t))
                             : make_batch_member_solver(batch_of(t), options.refinement),
        chosen, baseline);
  };
  if (!batches.empty()) {
    runners.clear();                    // the baseline's runner: its solver is not a member
    runners.push_back(make_member(0));  // the others are built by their threads (below)
  }
  // The other threads' runners (a network copy, a workspace, a copy of the analysed solver) are
  // built by their own threads, at once: on a small network with many cores, building them one
  // after another and then starting the threads cost more than the scenarios (Net3 on 16 cores:
  // 92 scenarios in 1.2 ms). The study's clock starts when every runner is built.
  runners.resize(static_cast<std::size_t>(out.threads));
  std::mutex make_mutex;  // make_solver need not be thread-safe
  auto build_runner = [&](int t) {
    if (!batches.empty()) {
      runners[t] = make_member(t);
      return;
    }
    std::unique_ptr<LinearSolver> copy = runners[0]->solver().clone_analysed();
    if (!copy) {
      const std::lock_guard<std::mutex> lock(make_mutex);
      copy = make_quiet_solver();
    }
    runners[t] = std::make_unique<ScenarioRunner>(net, std::move(copy), chosen, baseline);
  };

  const int total = static_cast<int>(elements.size());
  out.scenarios.resize(elements.size());
  std::atomic<int> next{0};
  std::mutex progress_mutex;
  int done = 0, failed = 0;
  std::exception_ptr error;
  auto stop_with = [&](std::exception_ptr e) {  // not a scenario's failure (those are rows)
    const std::lock_guard<std::mutex> lock(progress_mutex);
    if (!error) error = e;
    next = total;
  };
  auto work = [&](int t) {
    ScenarioRunner& runner = *runners[t];
    const BatchMembership membership(batch_of(t).get());  // leaves when out of scenarios
    try {
      for (int i; (i = next++) < total;) {
        out.scenarios[i] = runner.run_scenario(i + 1, elements[i]);
        std::lock_guard<std::mutex> lock(progress_mutex);
        ++done;
        failed += !out.scenarios[i].ok;
        if (options.on_progress) options.on_progress(done, total, failed);
      }
    } catch (...) {
      stop_with(std::current_exception());
    }
  };
  std::latch built(out.threads);
  auto thread_main = [&](int t) {
    if (!runners[t]) {
      try {
        build_runner(t);
      } catch (...) {
        stop_with(std::current_exception());
      }
    }
    built.arrive_and_wait();
    if (runners[t]) work(t);
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < out.threads; ++t) threads.emplace_back(thread_main, t);
  built.arrive_and_wait();
  out.setup_seconds = since(start);
  const auto scenarios_start = Clock::now();
  work(0);
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
  for (const auto& batch : batches)  // an engine failed
    if (batch->error()) std::rethrow_exception(batch->error());
  out.scenario_seconds = since(scenarios_start);
  for (const auto& batch : batches) {
    const BatchRendezvous::Counts c = batch->counts();
    out.batch.launches += c.launches;
    out.batch.systems += c.systems;
    out.batch.iterations += c.iterations;
    out.batch.critical_iterations += c.critical_iterations;
  }
  out.solver_name = runners[0]->solver().name();
  for (const auto& runner : runners) {
    const int a = runner->solver().analyses();
    if (a < 0) break;
    out.analyses = std::max(0, out.analyses) + a;
  }
  return out;
}

std::string study_element_name(const Network& net, StudyKind kind, const ScenarioResult& r) {
  if (r.scenario == 0) return "baseline";
  if (kind == StudyKind::demand) return "draw" + std::to_string(r.scenario);
  return kind == StudyKind::fireflow ? net.nodes[r.element].id : net.links[r.element].id;
}

void write_study_csv(const std::string& path, const Network& net, const StudyResults& results,
                     const StudyOptions& options) {
  std::string text =
      "scenario,element,ok,iterations,min_pressure,min_node,element_pressure,below_threshold,"
      "cut_off,min_cut_off,deficit_pct,available_flow,reason\n";
  auto row = [&](const ScenarioResult& r) {
    text += std::to_string(r.scenario) + "," +
            csv_field(study_element_name(net, options.spec.kind, r)) + "," + (r.ok ? "1" : "0") +
            "," + std::to_string(r.trials) + "," + format_number(r.min_pressure) + "," +
            (r.min_node >= 0 ? csv_field(net.nodes[r.min_node].id) : "") + "," +
            format_number(r.element_pressure) + "," + std::to_string(r.below_threshold) + "," +
            std::to_string(r.cut_off) + "," + (r.min_cut_off ? "1" : "0") + "," +
            format_number(r.demand_deficit) + "," + format_number(r.available_flow) + "," +
            csv_field(r.reason) + "\n";
  };
  row(results.baseline);
  for (const ScenarioResult& r : results.scenarios) row(r);
  write_file_atomically(path, text);
}

}  // namespace cgs::net
