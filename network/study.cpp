// Scenario studies (study.hpp): the per-thread scenario runner, the start's probes and the three
// engines that run a study as its plan says (host threads, batched, trials).
#include "network/study.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <latch>
#include <mutex>
#include <thread>
#include <utility>

#include "formats/types.hpp"
#include "network/simulation.hpp"
#include "network/trial_batch.hpp"

namespace cgs::net {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
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
                 const StudyOptions& options, const Baseline& baseline, bool warm)
      : net_(net),
        workspace_(net_),
        solver_(std::move(solver)),
        options_(options),
        baseline_(baseline),
        lowest_(net_.junction_count),
        cut_now_(net_.junction_count, 0),
        accuracy_(net.options.accuracy),
        warm_start_(warm) {
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

  // The scenario's row. A warm-started scenario that ends unbalanced or fails is run again
  // cold: EPANET's own path may balance it (a closure that ran 50 trials unbalanced from the
  // baseline's flows balances in 8 from EPANET's), and only EPANET's path is the reference.
  ScenarioResult run_scenario(int scenario, int element) {
    ScenarioResult r = run_once(scenario, element);
    if (!warm() || probing_ || (r.ok && r.reason.empty())) return r;
    warm_start_ = false;
    ScenarioResult cold = run_once(scenario, element);
    warm_start_ = true;
    ++cold_resolves_;
    return cold;
  }
  int cold_resolves() const { return cold_resolves_; }

 private:
  ScenarioResult run_once(int scenario, int element) {
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
  bool warm_start_;
  bool probing_ = false;
  int cold_resolves_ = 0;  // warm-started scenarios run again cold (run_scenario)

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

// --start auto after the baseline: `probes` scenarios spread over the study, each run warm and
// cold on `runner`. Warm where every pair of rows agrees and warm takes at least 10% fewer trials
// in all: both reach EPANET's answer then and warm gets there sooner; otherwise EPANET's own path.
// Returns the start and its reason.
std::pair<StudyStart, std::string> probe_start(ScenarioRunner& runner,
                                               const std::vector<int>& elements, int probes) {
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
  char text[200];
  std::snprintf(text, sizeof text,
                "%s (%d probe scenarios: warm %.2f trials each, cold %.2f; %d whose rows differ)",
                keep_warm ? "warm, from the baseline's solution" : "cold, EPANET's own path",
                probes, double(warm_trials) / std::max(1, probes),
                double(cold_trials) / std::max(1, probes), differ);
  return {keep_warm ? StudyStart::warm : StudyStart::cold, text};
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

// Scenarios done and failed, handed to StudyOptions::on_progress as each finishes.
class Progress {
 public:
  Progress(const StudyOptions& options, int total) : options_(options), total_(total) {}
  void done(const ScenarioResult& row) {
    const std::lock_guard<std::mutex> lock(mutex_);
    ++done_;
    failed_ += !row.ok;
    if (options_.on_row) options_.on_row(row);
    if (options_.on_progress) options_.on_progress(done_, total_, failed_);
  }

 private:
  const StudyOptions& options_;
  const int total_;
  std::mutex mutex_;
  int done_ = 0, failed_ = 0;
};

// What the engines share: the study, its elements, the baseline and the runners (the first is
// the baseline's until an engine replaces it), and the results with the plan.
struct StudyRun {
  StudyRun(const Network& n, const std::function<std::unique_ptr<LinearSolver>()>& make,
           const StudyOptions& o, std::vector<int> e)
      : net(n), make_solver(make), options(o), all_elements(std::move(e)) {
    std::vector<char> done(all_elements.size() + 1, 0);
    for (const ScenarioResult& r : o.done)
      if (r.scenario >= 1 && r.scenario <= static_cast<int>(all_elements.size()))
        done[static_cast<std::size_t>(r.scenario)] = 1;
    for (std::size_t i = 0; i < all_elements.size(); ++i)
      if (static_cast<int>(i % std::size_t(std::max(1, o.shards))) == o.shard && !done[i + 1]) {
        elements.push_back(all_elements[i]);
        numbers.push_back(static_cast<int>(i) + 1);
      }
  }

  const Network& net;
  const std::function<std::unique_ptr<LinearSolver>()>& make_solver;
  const StudyOptions& options;
  std::vector<int> all_elements;  // the whole study's (the probes of --start auto)
  std::vector<int> elements;      // this shard's (StudyOptions::shard), and their scenarios:
  std::vector<int> numbers;       // scenario numbers[i] studies elements[i]
  Clock::time_point start = Clock::now();
  StudyResults out;
  Baseline baseline;
  std::vector<std::unique_ptr<ScenarioRunner>> runners;
  std::mutex make_mutex;  // make_solver need not be thread-safe

  int total() const { return static_cast<int>(elements.size()); }
  int number(int i) const { return numbers[static_cast<std::size_t>(i)]; }
  // The rows read no residuals: the direct solvers skip measuring them (clones inherit it).
  std::unique_ptr<LinearSolver> quiet_solver() {
    std::unique_ptr<LinearSolver> solver = make_solver();
    solver->measure_residuals(false);
    return solver;
  }
  std::unique_ptr<ScenarioRunner> runner(std::unique_ptr<LinearSolver> solver) {
    return std::make_unique<ScenarioRunner>(net, std::move(solver), options, baseline,
                                            out.plan.warm());
  }
  // A host thread's runner: a copy of the baseline's analysed solver, or a new solver where it
  // cannot be copied.
  std::unique_ptr<ScenarioRunner> host_runner() {
    std::unique_ptr<LinearSolver> copy = runners[0]->solver().clone_analysed();
    if (!copy) {
      const std::lock_guard<std::mutex> lock(make_mutex);
      copy = quiet_solver();
    }
    return runner(std::move(copy));
  }
  // The solver's name and the symbolic analyses over every runner's solver.
  void record_solvers() {
    out.solver_name = runners[0]->solver().name();
    for (const auto& r : runners) {
      const int a = r->solver().analyses();
      if (a < 0) break;
      out.analyses = std::max(0, out.analyses) + a;
    }
  }
};

// The baseline on the first runner, then the start: a warm start needs the baseline solved, and
// --start auto probes scenarios both ways on the baseline's runner.
void run_baseline(StudyRun& s) {
  StudyPlan& plan = s.out.plan;
  s.runners.push_back(s.runner(s.quiet_solver()));
  s.out.baseline = s.runners[0]->run_baseline(s.baseline);
  if (plan.start != StudyStart::cold && !s.baseline.solved) {
    plan.start = StudyStart::cold;
    plan.set_reason("start",
                    "cold, EPANET's own path (the baseline did not solve: no solution "
                    "to start from)");
  } else if (plan.start == StudyStart::probe) {
    const auto [start, why] = probe_start(*s.runners[0], s.all_elements, plan.start_probes);
    plan.start = start;
    plan.set_reason("start", why);
  }
  s.runners[0]->set_warm_start(plan.warm());
}

// Scenario after scenario on the plan's threads until none is left. Thread t's runner, where
// runners[t] is empty, is built by build(t) on that thread, every thread at once: on a small
// network with many cores, building them one after another and then starting the threads cost
// more than the scenarios (Net3 on 16 cores: 92 scenarios in 1.2 ms). The study's clock starts
// when every runner is built. group(t): the rendezvous thread t's solver belongs to, or null.
template <typename Build, typename Group>
void run_threads(StudyRun& s, Build&& build, Group&& group) {
  const int total = s.total(), threads = s.out.plan.threads;
  s.runners.resize(static_cast<std::size_t>(threads));
  s.out.scenarios.resize(s.elements.size());
  std::atomic<int> next{0};
  Progress progress(s.options, total);
  std::mutex error_mutex;
  std::exception_ptr error;
  auto stop_with = [&](std::exception_ptr e) {  // not a scenario's failure (those are rows)
    const std::lock_guard<std::mutex> lock(error_mutex);
    if (!error) error = e;
    next = total;
  };
  auto work = [&](int t) {
    ScenarioRunner& runner = *s.runners[t];
    const BatchMembership membership(group(t));  // leaves when out of scenarios
    try {
      for (int i; (i = next++) < total;) {
        s.out.scenarios[i] = runner.run_scenario(s.number(i), s.elements[i]);
        progress.done(s.out.scenarios[i]);
      }
    } catch (...) {
      stop_with(std::current_exception());
    }
  };
  std::latch built(threads);
  auto thread_main = [&](int t) {
    if (!s.runners[t]) {
      try {
        s.runners[t] = build(t);
      } catch (...) {
        stop_with(std::current_exception());
      }
    }
    built.arrive_and_wait();
    if (s.runners[t]) work(t);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(thread_main, t);
  built.arrive_and_wait();
  s.out.setup_seconds = since(s.start);
  const auto scenarios_start = Clock::now();
  work(0);
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  s.out.scenario_seconds = since(scenarios_start);
}

// The host engine: every thread with its own copy of the baseline's analysed solver.
void run_on_host(StudyRun& s) {
  run_threads(
      s, [&](int) { return s.host_runner(); }, [](int) -> BatchRendezvous* { return nullptr; });
  s.record_solvers();
}

std::unique_ptr<BatchCg> make_batch_engine(const StudyPlan& plan) {
  if (plan.engine == StudyEngine::batched_cholesky)
    return plan.gpu ? make_gpu_batch_cholesky() : make_cpu_batch_cholesky();
  if (plan.gpu) return make_gpu_batch_cg(plan.cg.cg);
  // The members scale their systems and hand in the corrections: no factor to apply there, so
  // the network rule (--precond auto) is plain CG on the scaled system, as on the GPU.
  SolveRequest request = plan.cg;
  if (request.precond.is("auto")) request.precond = PrecondSpec{};
  return make_cpu_batch_cg(request);
}

// The batched engines: the scenarios in lockstep, one thread each, whose solvers hand their
// systems to their group's rendezvous; each group has its own engine, and a member waits only
// for its own group.
void run_batched(StudyRun& s) {
  const StudyPlan& plan = s.out.plan;
  std::vector<std::shared_ptr<BatchRendezvous>> groups;
  for (int g = 0; g < plan.groups; ++g)
    groups.push_back(std::make_shared<BatchRendezvous>(
        make_batch_engine(plan), plan.threads / plan.groups + (g < plan.threads % plan.groups)));
  auto group_of = [&](int t) { return groups[static_cast<std::size_t>(t) % groups.size()]; };
  auto member = [&](int t) {
    return s.runner(plan.engine == StudyEngine::batched_cholesky
                        ? make_batch_direct_member_solver(group_of(t))
                        : make_batch_member_solver(group_of(t), plan.refinement));
  };
  s.runners.clear();               // the baseline's runner: its solver is not a member
  s.runners.push_back(member(0));  // the others are built by their threads
  run_threads(s, member, [&](int t) { return group_of(t).get(); });
  for (const auto& group : groups)  // an engine failed
    if (group->error()) std::rethrow_exception(group->error());
  for (const auto& group : groups) {
    const BatchRendezvous::Counts c = group->counts();
    s.out.batch.launches += c.launches;
    s.out.batch.systems += c.systems;
    s.out.batch.iterations += c.iterations;
    s.out.batch.critical_iterations += c.critical_iterations;
  }
  s.record_solvers();
}

// The trials engine's per-call buffers: the scenarios' changes, specs, outcomes and final link
// statuses, and each host thread's scratch start.
struct TrialCall {
  const trials::Layout layout;
  std::vector<double> base;
  std::vector<signed char> base_status;
  std::vector<std::vector<double>> scratch;
  std::vector<std::vector<signed char>> scratch_status;
  ChunkChanges changes;
  std::vector<signed char> final_statuses;
  std::vector<trials::ScenarioSpec> specs;
  std::vector<trials::Outcome> outcomes;

  TrialCall(const trials::Layout& l, int chunk)
      : layout(l),
        base(static_cast<std::size_t>(l.start())),
        base_status(static_cast<std::size_t>(l.links)),
        changes(chunk),
        final_statuses(static_cast<std::size_t>(chunk) * l.links),
        specs(static_cast<std::size_t>(chunk)),
        outcomes(static_cast<std::size_t>(chunk)) {}
};

// One call of the trials engine: scenarios first..first+count-1 prepared on the host threads,
// their trials run by the engine, their rows read (on the host where the engine handed one back).
void run_trial_call(StudyRun& s, BatchTrials& engine, TrialCall& call, int first, int count,
                    Progress& progress) {
  const int threads = s.out.plan.threads;
  for_each_index(threads, count, [&](int t, int i) {
    s.runners[t]->trial_start(s.number(first + i), s.elements[first + i], call.scratch[t].data(),
                              call.scratch_status[t].data(), call.specs[i]);
    call.changes.record(i, call.base, call.base_status, call.scratch[t], call.scratch_status[t]);
  });
  engine.run(call.changes.flatten(count), call.specs.data(), count, call.outcomes.data(),
             call.final_statuses.data());
  ++s.out.trial_calls;
  s.out.trial_kernel_ms += engine.kernel_ms();
  s.out.trial_call_ms += engine.call_ms();
  for_each_index(threads, count, [&](int t, int i) {
    const int index = first + i;
    ScenarioResult& row = s.out.scenarios[index];
    const trials::Outcome& outcome = call.outcomes[i];
    row = outcome.needs_host != 0
              ? s.runners[t]->run_scenario(s.number(index), s.elements[index])
              : s.runners[t]->trial_row(s.number(index), s.elements[index], outcome,
                                        call.final_statuses.data() + i * call.layout.links);
    progress.done(row);
  });
  for (int i = 0; i < count; ++i) {
    const trials::Outcome& outcome = call.outcomes[i];
    s.out.host_scenarios += outcome.needs_host != 0;
    s.out.trial_corrections += outcome.corrected;
    s.out.trial_cg_iterations += outcome.cg_iterations;
  }
}

// The trials engine: chunk after chunk, the host threads write every scenario's start as its
// changes of the unchanged network's, the engine runs their trials, the threads read the rows.
// What the host holds per call is the changes and the final statuses, so memory and set-up do not
// grow with the study beyond the engine's capacity.
void run_on_trials(StudyRun& s) {
  StudyPlan& plan = s.out.plan;
  ScenarioRunner& first = *s.runners[0];
  trials::PcgOptions pcg;
  if (plan.trials_cg) {  // the CG solver's refinement (cg_solver.cpp), as its members would run
    pcg.max_steps = plan.refinement.max_steps;
    pcg.accept = plan.refinement.accept_backward_error;
    pcg.inner_tol = plan.cg.cg.tol;
  }
  const std::unique_ptr<TrialNetwork> network =
      build_trial_network(first.network(), first.structure(), first.scenario_accuracy(),
                          s.options.pressure_threshold, pcg);
  if (plan.trial_budget < 0) {
    // Warm-started scenarios take about the baseline's trials (BWSN_Network_2: 10 and 10.0);
    // half as many again, at least 3 more, before a straggler goes to the host.
    const int baseline_trials = std::max(1, s.out.baseline.trials);
    plan.trial_budget = std::max(baseline_trials + 3, (3 * baseline_trials + 1) / 2);
    plan.reasons.push_back("trial budget: " + std::to_string(plan.trial_budget) +
                           " trials before a scenario goes to the host (the baseline's " +
                           std::to_string(s.out.baseline.trials) +
                           " and half again, at least 3 "
                           "more)");
  }
  network->view.o.trial_budget = plan.trial_budget;
  const std::unique_ptr<BatchTrials> engine =
      plan.gpu ? make_device_batch_trials(*network) : make_host_batch_trials(*network);
  const int total = s.total();
  if (plan.batch == 0)
    plan.set_reason("batch", std::to_string(std::min(total, engine->capacity())) +
                                 " scenarios a call (as many as the engine holds, at most the "
                                 "study's)");
  plan.batch = std::min(total, plan.batch > 0 ? plan.batch : engine->capacity());
  TrialCall call(network->layout(), plan.batch);
  first.trial_base(call.base.data(), call.base_status.data());
  engine->set_base(call.base.data(), call.base_status.data());
  const int threads = plan.threads;
  s.runners.resize(static_cast<std::size_t>(threads));
  for_each_index(threads, threads, [&](int, int t) {
    if (!s.runners[t]) s.runners[t] = s.host_runner();
  });
  call.scratch.assign(static_cast<std::size_t>(threads), call.base);
  call.scratch_status.assign(static_cast<std::size_t>(threads), call.base_status);
  s.out.scenarios.resize(s.elements.size());
  s.out.setup_seconds = since(s.start);
  const auto scenarios_start = Clock::now();
  Progress progress(s.options, total);
  for (int index = 0; index < total; index += plan.batch)
    run_trial_call(s, *engine, call, index, std::min(plan.batch, total - index), progress);
  s.out.scenario_seconds = since(scenarios_start);
  s.out.solver_name = s.runners[0]->solver().name();
}

}  // namespace

StudyResults run_study(const Network& net,
                       const std::function<std::unique_ptr<LinearSolver>()>& make_solver,
                       const StudyOptions& options) {
  StudyRun s(net, make_solver, options, study_elements(net, options));
  if (s.all_elements.empty())
    throw InputError(
        net.source, 0,
        "nothing to study: the network has no " +
            std::string(options.spec.kind == StudyKind::fireflow ? "junction" : "pipe"));
  const long duration = options.duration >= 0 ? options.duration : net.times.duration;
  s.out.plan =
      make_study_plan(options.run, net, {s.total(), duration, options.residual_pressure >= 0});
  run_baseline(s);
  switch (s.out.plan.engine) {
    case StudyEngine::host: run_on_host(s); break;
    case StudyEngine::batched_cg:
    case StudyEngine::batched_cholesky: run_batched(s); break;
    case StudyEngine::trials: run_on_trials(s); break;
  }
  for (const auto& runner : s.runners)
    if (runner) s.out.cold_resolves += runner->cold_resolves();
  if (!options.done.empty()) {  // a resumed study: the rows done before, in scenario order
    std::vector<ScenarioResult>& rows = s.out.scenarios;
    for (const ScenarioResult& r : options.done)
      if ((r.scenario - 1) % std::max(1, options.shards) == options.shard) rows.push_back(r);
    std::sort(rows.begin(), rows.end(), [](const ScenarioResult& a, const ScenarioResult& b) {
      return a.scenario < b.scenario;
    });
    s.out.resumed = static_cast<int>(options.done.size());
  }
  return std::move(s.out);
}

}  // namespace cgs::net
