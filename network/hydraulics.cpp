// The gradient algorithm's state between trials (EPANET's hydraul.c): its arrays and matrix
// structure, initialisation, each period's demands and simple controls, tank levels, the link
// settings that rules and patterns make, and the results.
#include "network/hydraulics.hpp"

#include <algorithm>
#include <cmath>

#include "formats/convert.hpp"
#include "formats/types.hpp"
#include "network/epanet_order.hpp"

namespace cgs::net {
namespace {

constexpr double kZeroFlow = 1.0e-6;  // EPANET's QZERO: the flow that stands for zero

}  // namespace

GradientAlgorithm::GradientAlgorithm(const Network& net)
    : net_(net), opt_(net.options), nj_(net.junction_count) {
  const std::size_t n = net.nodes.size(), m = net.links.size();
  head_.assign(n, 0.0);
  demand_.assign(n, 0.0);
  delivered_.assign(n, 0.0);
  fixed_inflow_.assign(n, 0.0);
  emitter_flow_.assign(n, 0.0);
  leak_fixed_.assign(n, 0.0);
  leak_variable_.assign(n, 0.0);
  volume_.assign(n, 0.0);
  xflow_.assign(n, 0.0);
  flow_.assign(m, 0.0);
  setting_.assign(m, 0.0);
  pcv_loss_.assign(m, 0.0);
  P_.assign(m, 0.0);
  Y_.assign(m, 0.0);
  status_.assign(m, static_cast<signed char>(LinkStatus::open));
  network_.load(net);
  flatten_demands();
  for (std::size_t k = 0; k < m; ++k)
    if (net.links[k].type == LinkType::pump) pumps_.push_back(static_cast<int>(k));
  build_structure();
  network_.compute_resistances(net);
}

// One diagonal per junction and one off-diagonal pair per pair of junctions joined by links
// (parallel links share it), as EPANET's sparse matrix; slots are found once.
void GradientAlgorithm::build_structure() {
  std::vector<index_t> rows, cols;
  for (int i = 0; i < nj_; ++i) rows.push_back(i), cols.push_back(i);
  for (const Link& link : net_.links) {
    if (!net_.is_junction(link.from) || !net_.is_junction(link.to)) continue;
    rows.push_back(link.from), cols.push_back(link.to);
    rows.push_back(link.to), cols.push_back(link.from);
  }
  std::vector<double> zeros(rows.size(), 0.0);
  system_.A = csr_from_triplets<double>(nj_, nj_, rows, cols, zeros);
  system_.b.assign(nj_, 0.0);
  system_.elimination_order = epanet_elimination_order(net_);
  const CsrMatrix<double>& A = system_.A;
  auto slot = [&](int r, int c) {
    auto first = A.col_idx.begin() + A.row_ptr[r], last = A.col_idx.begin() + A.row_ptr[r + 1];
    return static_cast<int>(std::lower_bound(first, last, c) - A.col_idx.begin());
  };
  network_.a_nnz = static_cast<int>(A.nnz());
  network_.diag_slot.resize(nj_);
  for (int i = 0; i < nj_; ++i) network_.diag_slot[i] = slot(i, i);
  network_.slot_ij.assign(net_.links.size(), -1);
  network_.slot_ji.assign(net_.links.size(), -1);
  for (std::size_t k = 0; k < net_.links.size(); ++k) {
    const Link& link = net_.links[k];
    if (!net_.is_junction(link.from) || !net_.is_junction(link.to)) continue;
    network_.slot_ij[k] = slot(link.from, link.to);
    network_.slot_ji[k] = slot(link.to, link.from);
  }
}

gga::State GradientAlgorithm::state(double* x) {
  const auto column = [](std::vector<double>& v) { return gga::Column{v.data(), 1}; };
  gga::State s;
  s.head = column(head_), s.demand = column(demand_), s.delivered = column(delivered_);
  s.emitter_flow = column(emitter_flow_), s.xflow = column(xflow_);
  s.leak_fixed = column(leak_fixed_), s.leak_variable = column(leak_variable_);
  s.flow = column(flow_), s.setting = column(setting_), s.pcv_loss = column(pcv_loss_);
  s.P = column(P_), s.Y = column(Y_);
  s.A = column(system_.A.values), s.b = column(system_.b), s.x = gga::Column{x, 1};
  s.status = gga::StatusColumn{status_.data(), 1};
  return s;
}

void GradientAlgorithm::initialise() {
  network_.load(net_);  // the records as they are now
  flatten_demands();
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) {
    const Node& node = net_.nodes[i];
    head_[i] = node.initial_head;
    volume_[i] = node.initial_volume;
    fixed_inflow_[i] = 0.0;
  }
  for (int i = 0; i < nj_; ++i) {
    head_[i] = net_.nodes[i].elevation;
    emitter_flow_[i] = net_.nodes[i].emitter > 0 ? 1.0 : 0.0;
    delivered_[i] = 0.0;
  }
  // EPANET's init_node_leakage: a leak starts from 0.001 cfs (the solver needs a flow).
  std::fill(leak_fixed_.begin(), leak_fixed_.end(), 0.0);
  std::fill(leak_variable_.begin(), leak_variable_.end(), 0.0);
  for (std::size_t j = 0; j < network_.leaks.size(); ++j) {
    const int i = network_.leaks[j];
    if (network_.leak_fixed[j] > 0.0) leak_fixed_[i] = 0.001;
    if (network_.leak_variable[j] > 0.0) leak_variable_[i] = 0.001;
  }
  for (std::size_t k = 0; k < net_.links.size(); ++k) {
    const Link& link = net_.links[k];
    LinkStatus initial = link.status;
    setting_[k] = link.setting;
    if (link.type == LinkType::pcv) pcv_loss_[k] = pcv_loss_coefficient(net_, link, link.pcv_setting);
    // Pressure and flow control valves with a setting start ACTIVE.
    const bool control_valve =
        link.type == LinkType::prv || link.type == LinkType::psv || link.type == LinkType::fcv;
    if (control_valve && link.setting != kMissing) initial = LinkStatus::active;
    set_status(k, initial);
    if (is_closed(initial))
      flow_[k] = kZeroFlow;
    else if (link.type == LinkType::pump)
      flow_[k] = setting_[k] * net_.pumps[link.pump].q0;
    else
      flow_[k] = gga::kPi * (link.diameter * link.diameter) / 4.0;  // 1 ft/s
  }
}

void GradientAlgorithm::warm_start(const std::vector<double>& flows) {
  for (std::size_t k = 0; k < net_.links.size() && k < flows.size(); ++k)
    if (!is_closed(status(k))) flow_[k] = flows[k];
}

void GradientAlgorithm::start_period(long time, const ControlObserver* on_control) {
  demands(time);
  controls(time, on_control);
}

// Every junction's demands as flat arrays (the Network's per-node lists, read each period, are
// scattered through memory): base and pattern (the default one resolved; -1: none), by junction.
void GradientAlgorithm::flatten_demands() {
  const int default_pattern = net_.default_pattern();
  demand_ptr_.assign(1, 0);
  demand_base_.clear();
  demand_pattern_.clear();
  for (int i = 0; i < nj_; ++i) {
    for (const Demand& d : net_.nodes[i].demands) {
      demand_base_.push_back(d.base);
      demand_pattern_.push_back(d.pattern >= 0 ? d.pattern : default_pattern);
    }
    demand_ptr_.push_back(static_cast<int>(demand_base_.size()));
  }
  pattern_factor_.assign(net_.patterns.size() + 1, 1.0);
}

// EPANET's demands(): the pattern period that contains `time` (counted from PATTERN START) sets
// junction demands, reservoir heads and pump speeds.
void GradientAlgorithm::demands(long time) {
  const long period = (time + net_.times.pattern_start) / net_.times.pattern_step;
  auto factor = [&](int p) {
    if (p < 0) return 1.0;
    const auto& f = net_.patterns[p].factors;
    return f.empty() ? 1.0 : f[period % static_cast<long>(f.size())];
  };
  // Each pattern's factor of this period, at pattern_factor_[p + 1] (slot 0: no pattern, 1).
  for (std::size_t p = 0; p < net_.patterns.size(); ++p)
    pattern_factor_[p + 1] = factor(static_cast<int>(p));
  system_demand_ = 0;
  for (int i = 0; i < nj_; ++i) {
    double sum = 0;
    for (int d = demand_ptr_[i]; d < demand_ptr_[i + 1]; ++d) {
      const double q =
          demand_base_[d] * pattern_factor_[demand_pattern_[d] + 1] * opt_.demand_multiplier;
      if (q > 0.0) system_demand_ += q;
      sum += q;
    }
    demand_[i] = sum;
    delivered_[i] = sum;  // as EPANET: every period starts from full delivery
  }
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) {
    const Node& node = net_.nodes[i];
    if (node.type == NodeType::reservoir && node.head_pattern >= 0)
      head_[i] = node.elevation * factor(node.head_pattern);
  }
  for (int k : pumps_) {
    if (net_.pumps[net_.links[k].pump].speed_pattern < 0) continue;
    set_link_setting(k, factor(net_.pumps[net_.links[k].pump].speed_pattern));
  }
}

// EPANET's controls(): simple controls on tank levels (with a tolerance of one second's inflow),
// elapsed time and time of day act at the start of a period; controls on junction pressures act
// after convergence (apply_pressure_controls).
int GradientAlgorithm::controls(long time, const ControlObserver* on_control) {
  int changes = 0;
  for (std::size_t i = 0; i < net_.controls.size(); ++i) {
    const Control& c = net_.controls[i];
    bool fire = false;
    if (c.node >= 0 && !net_.is_junction(c.node)) {
      const double margin = std::abs(fixed_inflow_[c.node]);
      const double v_now = tank_volume(c.node, head_[c.node]);
      const double v_set = tank_volume(c.node, c.grade);
      if (c.type == ControlType::low_level && v_now <= v_set + margin) fire = true;
      if (c.type == ControlType::high_level && v_now >= v_set - margin) fire = true;
    }
    if (c.type == ControlType::timer && c.time == time) fire = true;
    if (c.type == ControlType::time_of_day && (time + net_.times.start_clocktime) % 86400 == c.time)
      fire = true;
    if (!fire) continue;
    const Link& link = net_.links[c.link];
    const LinkStatus s1 = is_closed(status(c.link)) ? LinkStatus::closed : LinkStatus::open;
    const double k1 = setting_[c.link];
    const double k2 = link.type > LinkType::pipe ? c.setting : k1;
    if (link.type == LinkType::pump && s1 == LinkStatus::closed && c.status == LinkStatus::open)
      reset_pump_flow(c.link);
    if (s1 != c.status || k1 != k2) {
      set_status(c.link, c.status);
      setting_[c.link] = k2;
      if (link.type == LinkType::pcv) pcv_loss_[c.link] = pcv_loss_coefficient(net_, link, k2);
      ++changes;
      if (on_control) (*on_control)(c.link, static_cast<int>(i));
    }
  }
  return changes;
}

// A constant-power pump switched on starts again from its initial flow: at zero flow its curve is
// infinite (EPANET's resetpumpflow).
void GradientAlgorithm::reset_pump_flow(int k) {
  const Pump& pump = net_.pumps[net_.links[k].pump];
  if (pump.type == PumpCurveType::constant_power) flow_[k] = pump.q0;
}

void GradientAlgorithm::set_link_open(int k, bool open) {
  const Link& link = net_.links[k];
  const bool valve = link.type > LinkType::pump && link.type != LinkType::gpv;
  if (open) {
    if (link.type == LinkType::pump) {
      setting_[k] = 1.0;
      if (status(k) == LinkStatus::closed) reset_pump_flow(k);
    }
    if (valve) setting_[k] = kMissing;
    set_status(k, LinkStatus::open);
  } else {
    if (link.type == LinkType::pump) setting_[k] = 0.0;
    if (valve) setting_[k] = kMissing;
    set_status(k, LinkStatus::closed);
  }
}

void GradientAlgorithm::set_link_setting(int k, double value) {
  const Link& link = net_.links[k];
  if (link.type == LinkType::pump) {
    setting_[k] = value;
    if (value > 0 && is_closed(status(k))) {
      reset_pump_flow(k);
      set_status(k, LinkStatus::open);
    }
    if (value == 0 && !is_closed(status(k))) set_status(k, LinkStatus::closed);
  } else if (link.type == LinkType::fcv) {
    setting_[k] = value;
    set_status(k, LinkStatus::active);
  } else {
    if (setting_[k] == kMissing && is_closed(status(k))) set_status(k, LinkStatus::open);
    if (link.type == LinkType::pcv) pcv_loss_[k] = pcv_loss_coefficient(net_, link, value);
    setting_[k] = value;
  }
}

double GradientAlgorithm::node_demand(int node) const {
  return net_.is_junction(node) ? delivered_[node] + emitter_flow_[node] + leakage(node)
                                : fixed_inflow_[node];
}

// EPANET 2.3's tanklevels(): each tank's volume after dt seconds of its current net inflow, set to
// its limit when within one second's inflow of it, and the head of that volume. As EPANET: a tank
// whose inflow is within QZERO of zero is left as it is, and the test for empty does not look at
// the sign of the inflow (a tank at its minimum that takes in less than a second's worth of water
// over the step stays empty): both decide which step a level control fires at.
void GradientAlgorithm::tank_levels(long dt) {
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) {
    const Node& tank = net_.nodes[i];
    if (tank.type != NodeType::tank) continue;
    const double q = fixed_inflow_[i];
    if (std::abs(q) <= kZeroFlow) continue;
    volume_[i] += q * static_cast<double>(dt);
    if (volume_[i] + q >= tank.max_volume)
      volume_[i] = tank.max_volume;
    else if (volume_[i] - q <= tank.min_volume)
      volume_[i] = tank.min_volume;
    head_[i] = tank_grade(static_cast<int>(i), volume_[i]);
  }
}

// EPANET's tankvolume() and tankgrade(): volume and head of a tank, through its volume curve
// (stored in the file's units) or its area.
double GradientAlgorithm::tank_volume(int node, double head) const {
  const Node& tank = net_.nodes[node];
  if (tank.type != NodeType::tank) return 0.0;  // reservoirs: no volume
  if (tank.volume_curve >= 0) {
    const Curve& c = net_.curves[tank.volume_curve];
    const double depth = (head - tank.elevation) * net_.units.length;
    return interpolate(c.x, c.y, depth) / net_.units.volume;
  }
  return tank.min_volume + (head - tank.min_head) * tank.area;
}

double GradientAlgorithm::tank_grade(int node, double volume) const {
  const Node& tank = net_.nodes[node];
  if (tank.volume_curve >= 0) {
    const Curve& c = net_.curves[tank.volume_curve];
    return tank.elevation + interpolate(c.y, c.x, volume * net_.units.volume) / net_.units.length;
  }
  return tank.min_head + (volume - tank.min_volume) / tank.area;
}

void GradientAlgorithm::export_trial_start(double* start, signed char* status) const {
  for (const std::vector<double>* v :
       {&head_, &demand_, &delivered_, &emitter_flow_, &leak_fixed_, &leak_variable_, &flow_,
        &setting_, &pcv_loss_})
    start = std::copy(v->begin(), v->end(), start);
  std::copy(status_.begin(), status_.end(), status);
}

HydraulicResults GradientAlgorithm::results() const {
  HydraulicResults r;
  r.head = head_;
  r.demand.assign(net_.nodes.size(), 0.0);
  r.required_demand.assign(net_.nodes.size(), 0.0);
  r.delivered_demand.assign(net_.nodes.size(), 0.0);
  r.leakage.assign(net_.nodes.size(), 0.0);
  for (int i = 0; i < nj_; ++i) {
    r.leakage[i] = leakage(i);
    r.demand[i] = delivered_[i] + emitter_flow_[i] + r.leakage[i];
    r.required_demand[i] = demand_[i];
    r.delivered_demand[i] = delivered_[i];
  }
  for (std::size_t i = nj_; i < net_.nodes.size(); ++i) r.demand[i] = fixed_inflow_[i];
  r.flow = flow_;
  r.status.resize(status_.size());
  for (std::size_t k = 0; k < status_.size(); ++k)
    r.status[k] = static_cast<LinkStatus>(status_[k]);
  // As EPANET reports them: a closed link carries no flow (its 1e-8 coupling is numerical only).
  for (std::size_t k = 0; k < flow_.size(); ++k)
    if (is_closed(r.status[k])) r.flow[k] = 0.0;
  return r;
}

}  // namespace cgs::net
